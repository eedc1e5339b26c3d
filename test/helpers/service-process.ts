import { ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';

const MAIN = join(__dirname, '..', '..', 'dist', 'main.js');

/** The service as a real process (`node dist/main.js`, built by `npm test`'s pretest), for kill/restart tests. */
export class ServiceProcess {
  private exited: Promise<number | null>;
  output = '';

  private constructor(private readonly child: ChildProcess) {
    this.exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
    child.stdout?.on('data', (d) => (this.output += d));
    child.stderr?.on('data', (d) => (this.output += d));
  }

  /**
   * `opts.cwd`: run the dist/main.js of another copy of the project, from its folder. A start takes about two
   * seconds on a quiet machine; the wider default bound (within jest's 60 s for a hook) is for a busy one
   * (seen: over 30 s at a load of 14 on two cores, with tracing loaded).
   */
  static async start(
    vars: Record<string, string>,
    timeoutMs = 45_000,
    opts: { cwd?: string } = {},
  ): Promise<ServiceProcess> {
    const main = opts.cwd ? join(opts.cwd, 'dist', 'main.js') : MAIN;
    const child = spawn(process.execPath, [main], {
      cwd: opts.cwd,
      env: { PATH: process.env.PATH ?? '', ...vars },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const p = new ServiceProcess(child);
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`service did not start within ${timeoutMs} ms:\n${p.output}`)),
        timeoutMs,
      );
      const onData = () => {
        if (/role \w+ (listening on|running without)/.test(p.output)) {
          clearTimeout(timer);
          resolve();
        }
      };
      child.stderr?.on('data', onData);
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`service exited with ${code} before listening:\n${p.output}`));
      });
    });
    return p;
  }

  /** The port it listens on (from its start-up line), so PORT=0 works. */
  get port(): number {
    return Number(/listening on http:\/\/[^\s]*:(\d+)/.exec(this.output)?.[1]);
  }

  get pid(): number {
    return this.child.pid!;
  }

  /** SIGKILL: no shutdown hooks, in-flight work is simply lost to the process. */
  async kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill(signal);
    await this.exited;
  }

  /** Sends `signal` and waits for the process to end: its exit code (null when a signal ended it). */
  async signalAndWait(signal: NodeJS.Signals): Promise<number | null> {
    this.child.kill(signal);
    return this.exited;
  }

  /**
   * SIGTERM: shuts down as a deployment stops it (the end of a spec). A stop that runs into the service's own bound
   * (SHUTDOWN_TIMEOUT, 60 s) fails the spec with what the process said last, rather than as a hook that timed out
   * saying nothing.
   */
  async close(): Promise<void> {
    const running = this.child.exitCode === null && this.child.signalCode === null;
    const started = Date.now();
    await this.kill('SIGTERM');
    if (running && this.output.includes('did not stop within'))
      throw new Error(
        `pid ${this.pid} did not stop within its bound (${Date.now() - started} ms); its last output:\n` +
          this.output.slice(-6000),
      );
  }
}
