import { ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';

/** A Redis of the spec's own, on a fixed port, that it can kill and start again (it comes back empty) or freeze. */
export class OwnRedis {
  private child?: ChildProcess;
  constructor(readonly port: number) {}

  static async start(): Promise<OwnRedis> {
    const port = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const { port } = s.address() as { port: number };
        s.close(() => resolve(port));
      });
    });
    const redis = new OwnRedis(port);
    await redis.up();
    return redis;
  }

  async up(): Promise<void> {
    const child = spawn(
      'redis-server',
      ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      {
        stdio: ['ignore', 'pipe', 'ignore'],
      },
    );
    this.child = child;
    await new Promise<void>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (d) => {
        out += d;
        if (/Ready to accept connections/.test(out)) resolve();
      });
      child.once('exit', (code) => reject(new Error(`redis-server exited (${code}):\n${out}`)));
    });
  }

  async down(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await exited;
  }

  /** SIGSTOP: the server keeps its connections open and answers nothing, as a frozen host does. */
  freeze(): void {
    this.child?.kill('SIGSTOP');
  }

  close(): Promise<void> {
    return this.down();
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }
}
