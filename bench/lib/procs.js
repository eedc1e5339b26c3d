'use strict';
// Every child process the bench starts is tracked here and killed at the end, on failure and on signals.
const { spawn } = require('node:child_process');

const children = new Set();

/** Extra `node` flags for a child, from the environment variable `name` (space-separated; e.g. `--cpu-prof`). */
function nodeArgs(name) {
  return (process.env[name] || '').split(' ').filter(Boolean);
}

/**
 * Spawns a tracked child. Its output goes to our stderr prefixed with `name` (only the last lines are kept for errors).
 */
function spawnTracked(name, cmd, args, opts = {}) {
  const child = spawn(cmd, args, { ...opts, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  const tail = [];
  const keep = (buf) => {
    for (const line of buf.toString().split('\n')) {
      if (!line) continue;
      tail.push(line);
      if (tail.length > 50) tail.shift();
      if (process.env.BENCH_VERBOSE) process.stderr.write(`[${name}] ${line}\n`);
    }
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  child.exited = new Promise((resolve) =>
    child.once('exit', (code, signal) => {
      children.delete(child);
      resolve({ code, signal });
    }),
  );
  child.tail = tail;
  child.label = name;
  return child;
}

/** SIGTERM, then SIGKILL after `graceMs`. */
async function stop(child, graceMs = 5000) {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await child.exited;
  clearTimeout(timer);
}

async function stopAll() {
  await Promise.all([...children].map((c) => stop(c)));
}

function killAllNow() {
  for (const c of children) {
    try {
      c.kill('SIGKILL');
    } catch {
      /* already gone */
    }
  }
}

process.on('exit', killAllNow);

module.exports = { nodeArgs, spawnTracked, stop, stopAll, killAllNow };
