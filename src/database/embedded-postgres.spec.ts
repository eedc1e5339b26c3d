import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '../config';
import { startEmbeddedPostgres, stopOrphanedServer } from './embedded-postgres';

/** Whether `pid` still runs (a zombie does not: where nothing reaps orphans, a stopped one stays one). */
const alive = (pid: number): boolean => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
};

describe('stopOrphanedServer', () => {
  const root = mkdtempSync(join(tmpdir(), 'gwm-orphan-'));
  // a stand-in named like a PostgreSQL server, with no node process as its parent (setsid -f: its own session, its
  // parent gone at once), taking signals as a server does (a shell's `&` would have it ignore SIGINT)
  const postgres = join(root, 'postgres');
  copyFileSync(execFileSync('sh', ['-c', 'command -v sleep'], { encoding: 'utf8' }).trim(), postgres);
  const orphan = (cwd: string): number =>
    Number(
      execFileSync('setsid', ['-f', 'sh', '-c', 'echo $$; exec "$0" 60 >/dev/null 2>&1', postgres], {
        cwd,
        encoding: 'utf8',
      }).trim(),
    );
  const dataDir = (name: string, pid: number): string => {
    const dir = join(root, name);
    execFileSync('mkdir', ['-p', dir]);
    writeFileSync(join(dir, 'postmaster.pid'), `${pid}\n${dir}\n`);
    return dir;
  };
  const started: number[] = [];

  afterAll(() => {
    for (const pid of started) if (alive(pid)) process.kill(pid, 'SIGKILL');
    rmSync(root, { recursive: true, force: true });
  });

  it('stops the server a killed service left running on this data directory', async () => {
    const dir = dataDir('left', 0);
    const pid = orphan(dir);
    started.push(pid);
    writeFileSync(join(dir, 'postmaster.pid'), `${pid}\n${dir}\n`);
    const said: string[] = [];
    await stopOrphanedServer(dir, (m) => said.push(m));
    expect(alive(pid)).toBe(false);
    expect(said).toEqual([expect.stringContaining(`stopping the embedded PostgreSQL (pid ${pid})`)]);
  });

  it('leaves alone a server on another directory that a stale lock names (its pid given to another server)', async () => {
    const pid = orphan(root);
    started.push(pid);
    const dir = dataDir('stale', pid);
    const said: string[] = [];
    await stopOrphanedServer(dir, (m) => said.push(m));
    expect(alive(pid)).toBe(true);
    expect(said).toEqual([]);
  });
});

describe('startEmbeddedPostgres', () => {
  it('refuses in one line, naming DATA_DIR and DATABASE_URL, a data directory that cannot be made', async () => {
    // (Node's own recursive mkdir never returned for a path under /proc: the start hung)
    const started = startEmbeddedPostgres('/proc/gwm-no-such/data', () => undefined);
    await expect(started).rejects.toThrow(ConfigError);
    await expect(started).rejects.toThrow(
      "DATA_DIR: cannot make /proc/gwm-no-such/data for the embedded PostgreSQL (ENOENT: no such file or directory, mkdir '/proc/gwm-no-such'): set DATA_DIR to a writable directory, or set DATABASE_URL",
    );
  });
});
