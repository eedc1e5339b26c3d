// A webhook receiver: verifies each delivery's signature, then handles each webhook-id once.
// Run: WEBHOOK_SECRET=whsec_... PORT=8080 node examples/receiver.js
const { createServer } = require('node:http');
const { Webhook } = require('standardwebhooks');

const wh = new Webhook(process.env.WEBHOOK_SECRET); // the webhook's Secret, "whsec_..."
const seen = new Set(); // use a store with a TTL in production
createServer((req, res) => {
  const chunks = [];
  req
    .on('data', (chunk) => chunks.push(chunk))
    .on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8'); // the body exactly as signed
      let event;
      try {
        event = wh.verify(raw, req.headers); // throws on a bad signature or an old timestamp
      } catch {
        return res.writeHead(400).end();
      }
      const id = req.headers['webhook-id']; // the same on every retry of one delivery
      if (!seen.has(id)) {
        seen.add(id);
        console.log(JSON.stringify(event));
      }
      res.writeHead(204).end();
    });
}).listen(Number(process.env.PORT ?? 8080), '127.0.0.1');
