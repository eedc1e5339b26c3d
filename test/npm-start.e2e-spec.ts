import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { request } from 'undici';
import { useTestEnv } from './helpers/use-service';

const ROOT = join(__dirname, '..');

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/**
 * `npm start` as a process manager or a test harness runs it: a signal to npm reaches the service. npm forwards it
 * to the script's shell; a shell that waited on node died of it and left node running, listening and holding its
 * database, with nobody to stop it.
 */
describe('npm start', () => {
  const env = useTestEnv();

  it.each(['start', 'start:api', 'start:worker'])(
    'npm run %s stops the service itself on SIGTERM to npm',
    async (script) => {
      // pretest has built dist/; --ignore-scripts skips prestart's second build, not the script itself
      const npm = spawn('npm', ['run', script, '--ignore-scripts'], {
        cwd: ROOT,
        env: { ...process.env, ...env.vars, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info' },
        stdio: ['ignore', 'pipe', 'pipe'],
        // a group of its own: whatever is left of npm, its shell and the service is killed at the end
        detached: true,
      });
      let output = '';
      npm.stdout.on('data', (d) => (output += d));
      npm.stderr.on('data', (d) => (output += d));
      const npmExited = new Promise<void>((resolve) => npm.once('exit', () => resolve()));
      try {
        // the line it listens with comes on stderr, its log lines (with its pid) on stdout: either may be read first
        const deadline = Date.now() + 45_000;
        const started = () => /listening on http:\/\/[^\s]*:\d+/.test(output) && /"pid":\d+/.test(output);
        while (!started() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
        const port = Number(/listening on http:\/\/[^\s]*:(\d+)/.exec(output)?.[1]);
        const servicePid = Number(/"pid":(\d+)/.exec(output)?.[1]);
        expect(port).toBeGreaterThan(0);
        expect(servicePid).toBeGreaterThan(0);
        const health = await request(`http://127.0.0.1:${port}/health`);
        expect(health.statusCode).toBe(200);
        await health.body.text();

        npm.kill('SIGTERM');
        await npmExited;
        const stopBy = Date.now() + 15_000;
        while (alive(servicePid) && Date.now() < stopBy) await new Promise((resolve) => setTimeout(resolve, 100));
        expect(alive(servicePid)).toBe(false);
      } finally {
        try {
          process.kill(-npm.pid!, 'SIGKILL'); // the service too: npm's script hands it npm's group
        } catch {
          // none of the group is left
        }
      }
    },
    90_000,
  );
});
