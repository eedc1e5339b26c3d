import { ChildProcess, execFile, spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * A throw-away Redis Cluster of `masters` masters (no replicas) on free loopback ports, each with its own
 * data directory, built from the machine's `redis-server` and `redis-cli`. `stop()` kills the servers and
 * removes the directories; servers still alive when the test process exits are killed then too.
 */
export class RedisCluster {
  private constructor(
    readonly ports: number[],
    private readonly children: ChildProcess[],
    private readonly dir: string,
  ) {}

  /** The service's URL form of the cluster. */
  get url(): string {
    return `redis-cluster://${this.ports.map((p) => `127.0.0.1:${p}`).join(',')}`;
  }

  /** REDIS_CLUSTER_NODES form. */
  get nodes(): string {
    return this.ports.map((p) => `127.0.0.1:${p}`).join(',');
  }

  static async start(masters = 3): Promise<RedisCluster> {
    for (const bin of ['redis-server', 'redis-cli']) {
      const probe = spawnSync(bin, ['--version'], { encoding: 'utf8' });
      if (probe.error || probe.status !== 0) {
        throw new Error(
          `${bin} is required for the Redis Cluster spec and was not found on PATH (Debian/Ubuntu: apt-get install redis-server)`,
        );
      }
    }
    const dir = mkdtempSync(join(tmpdir(), 'gwm-redis-cluster-'));
    const ports = await freeClusterPorts(masters);
    const children: ChildProcess[] = [];
    const cluster = new RedisCluster(ports, children, dir);
    try {
      for (const port of ports) {
        const nodeDir = join(dir, String(port));
        mkdirSync(nodeDir);
        const child = spawn(
          'redis-server',
          [
            '--port',
            String(port),
            '--bind',
            '127.0.0.1',
            '--cluster-enabled',
            'yes',
            '--cluster-config-file',
            `nodes-${port}.conf`,
            '--cluster-node-timeout',
            '2000',
            '--dir',
            nodeDir,
            '--dbfilename',
            'dump.rdb',
            '--appendonly',
            'no',
            '--save',
            '',
            '--protected-mode',
            'no',
            '--daemonize',
            'no',
          ],
          { stdio: 'ignore' },
        );
        children.push(child);
      }
      process.once('exit', () => cluster.killNow());
      for (const port of ports)
        await waitFor(async () => (await cli(port, 'PING')) === 'PONG', `redis-server on ${port}`);
      await run(
        'redis-cli',
        ['--cluster', 'create', ...ports.map((p) => `127.0.0.1:${p}`), '--cluster-replicas', '0', '--cluster-yes'],
        { timeout: 30_000 },
      );
      for (const port of ports) {
        await waitFor(
          async () => /cluster_state:ok/.test(await cli(port, 'CLUSTER', 'INFO')),
          `cluster state ok on ${port}`,
        );
      }
      return cluster;
    } catch (err) {
      await cluster.stop();
      throw err;
    }
  }

  /** Every key of the cluster (all masters), for checks. */
  async keys(pattern: string): Promise<string[]> {
    const out: string[] = [];
    for (const port of this.ports) {
      const { stdout } = await run('redis-cli', ['-p', String(port), '--scan', '--pattern', pattern]);
      out.push(...stdout.split('\n').filter(Boolean));
    }
    return out;
  }

  async stop(): Promise<void> {
    await Promise.all(
      this.children.map(
        (c) =>
          new Promise<void>((resolve) => {
            if (c.exitCode !== null || c.signalCode !== null) return resolve();
            c.once('exit', () => resolve());
            c.kill('SIGKILL');
          }),
      ),
    );
    rmSync(this.dir, { recursive: true, force: true });
  }

  private killNow(): void {
    for (const c of this.children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    rmSync(this.dir, { recursive: true, force: true });
  }
}

async function cli(port: number, ...args: string[]): Promise<string> {
  try {
    const { stdout } = await run('redis-cli', ['-p', String(port), ...args], { timeout: 2000 });
    return stdout.trim();
  } catch {
    return '';
  }
}

async function waitFor(check: () => Promise<boolean>, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Ports whose cluster bus port (port + 10000) is free too. */
async function freeClusterPorts(n: number): Promise<number[]> {
  const ports: number[] = [];
  while (ports.length < n) {
    const port = await freePort(0);
    if (
      port + 10000 <= 65535 &&
      !ports.includes(port) &&
      (await freePort(port + 10000).then(
        () => true,
        () => false,
      ))
    )
      ports.push(port);
  }
  return ports;
}

function freePort(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(port, '127.0.0.1', () => {
      const p = (srv.address() as { port: number }).port;
      srv.close(() => resolve(p));
    });
  });
}
