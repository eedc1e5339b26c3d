import { execFileSync, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { relocatedHome } from '../src/database/embedded-postgres';
import { ServiceProcess } from './helpers/service-process';
import { deleteQueueKeys } from './helpers/test-env';
import { ENV_REDIS_URL, ENV_RUN_ID, testQueuePrefix } from './setup/test-infra';

const ROOT = join(__dirname, '..');
const asRoot = typeof process.getuid === 'function' && process.getuid() === 0;

/** A copy of the project (built, with its node_modules) inside a folder only its owner may enter. */
function copyProject(): { outer: string; project: string } {
  const outer = mkdtempSync(join(tmpdir(), 'gwm-mode700-'));
  expect(statSync(outer).mode & 0o777).toBe(0o700);
  const project = join(outer, 'project');
  mkdirSync(project);
  for (const name of ['package.json', 'jest.config.js', 'dist', 'src', 'test'])
    cpSync(join(ROOT, name), join(project, name), { recursive: true });
  try {
    // hard links: the copy is instant, and its binaries are as unreachable as in a real clone
    execFileSync('cp', ['-al', join(ROOT, 'node_modules'), join(project, 'node_modules')]);
  } catch {
    cpSync(join(ROOT, 'node_modules'), join(project, 'node_modules'), { recursive: true, verbatimSymlinks: true });
  }
  return { outer, project };
}

function run(
  cmd: string,
  args: string[],
  cwd: string,
  env: Record<string, string>,
  timeoutMs: number,
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

describe('a checkout under a folder of mode 700, with no DATABASE_URL', () => {
  let outer: string;
  let project: string;
  const redisUrl = () => process.env[ENV_REDIS_URL]!;
  const env = () => ({ PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/', REDIS_URL: redisUrl() });

  beforeAll(() => {
    ({ outer, project } = copyProject());
  }, 60_000);
  afterAll(() => {
    for (const data of [join(project, '.data'), join(project, '.data', 'test')]) {
      if (existsSync(data)) rmSync(relocatedHome(data), { recursive: true, force: true });
    }
    rmSync(outer, { recursive: true, force: true });
  });

  it('npm start runs the embedded PostgreSQL and answers', async () => {
    const queuePrefix = `${testQueuePrefix(process.env[ENV_RUN_ID]!)}mode700`;
    const svc = await ServiceProcess.start(
      { ...env(), PORT: '0', HOST: '127.0.0.1', QUEUE_PREFIX: queuePrefix, LOG_LEVEL: 'silent' },
      120_000,
      { cwd: project },
    );
    try {
      expect(svc.output).toContain('embedded PostgreSQL listening');
      if (asRoot) expect(svc.output).toContain('the postgres user cannot enter');
      const ready = await request(`http://127.0.0.1:${svc.port}/health/ready`);
      expect(ready.statusCode).toBe(200);
      await ready.body.text();
    } finally {
      await svc.kill('SIGTERM');
      await deleteQueueKeys(redisUrl(), queuePrefix);
    }
  }, 150_000);

  it('the tests run there too (their global setup starts its own embedded PostgreSQL)', async () => {
    const jest = join(project, 'node_modules', 'jest', 'bin', 'jest.js');
    const { code, output } = await run(
      process.execPath,
      [jest, '--ci', 'test/id-rule.e2e-spec.ts'],
      project,
      env(),
      150_000,
    );
    expect(output).toContain('embedded PostgreSQL listening');
    expect(output).not.toContain('EACCES');
    expect(output).toMatch(/Tests:\s+\d+ passed, \d+ total/);
    expect(code).toBe(0);
  }, 180_000);
});
