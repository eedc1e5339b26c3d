'use strict';
// The webhook receiver: a loopback HTTP server answering 200 (or, for paths given in `slow`, 200 after a delay).
// It records the arrival time of every distinct webhook-id (retries and duplicates are counted apart).
const http = require('node:http');

/**
 * startReceiver({ slow: { '/slow': 10000 }, keepBodies }) → { url, port, receipts, count, waitFor(n), close() }.
 * receipts: Map webhook-id → { t (performance.now()), path, body }. onReceipt(rec) is called for every new one.
 */
async function startReceiver(opts = {}) {
  const slow = opts.slow ?? {};
  const receipts = new Map();
  let duplicates = 0;
  let total = 0;
  const waiters = [];
  const timers = new Set();
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const t = performance.now();
      total++;
      const id = req.headers['webhook-id'] ?? `anon-${total}`;
      const path = req.url;
      const delay = slow[path];
      if (receipts.has(id)) duplicates++;
      else {
        const rec = { t, path, body: Buffer.concat(chunks).toString('utf8') };
        receipts.set(id, rec);
        opts.onReceipt?.(rec, id);
        for (let i = waiters.length - 1; i >= 0; i--) {
          if (waiters[i].check()) {
            waiters[i].resolve();
            waiters.splice(i, 1);
          }
        }
      }
      if (delay) {
        const timer = setTimeout(() => {
          timers.delete(timer);
          res.writeHead(200, { 'content-length': '0' }).end();
        }, delay);
        timers.add(timer);
      } else {
        res.writeHead(200, { 'content-length': '0' }).end();
      }
    });
  });
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 70_000;
  server.requestTimeout = 0;
  server.maxRequestsPerSocket = 0;
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const port = server.address().port;
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    receipts,
    get duplicates() {
      return duplicates;
    },
    get total() {
      return total;
    },
    /** Resolves once `check()` holds (evaluated on every new receipt), or rejects after timeoutMs. */
    waitUntil(check, timeoutMs, what) {
      if (check()) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const w = { check, resolve: () => (clearTimeout(w.timer), resolve()) };
        w.timer = setTimeout(() => {
          const i = waiters.indexOf(w);
          if (i >= 0) waiters.splice(i, 1);
          reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what} (${receipts.size} receipts so far)`));
        }, timeoutMs);
        waiters.push(w);
      });
    },
    reset() {
      receipts.clear();
      duplicates = 0;
      total = 0;
    },
    async close() {
      for (const t of timers) clearTimeout(t);
      timers.clear();
      server.closeAllConnections?.();
      await new Promise((r) => server.close(() => r()));
    },
  };
}

module.exports = { startReceiver };
