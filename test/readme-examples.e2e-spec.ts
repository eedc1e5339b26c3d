import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ServiceProcess } from './helpers/service-process';
import { useTestEnv } from './helpers/use-service';

const ROOT = join(__dirname, '..');
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');

interface Block {
  line: number;
  lang: string;
  tags: string[];
  body: string;
}

/** Fenced code blocks of a Markdown text, with their info string split into language and tags. */
function fencedBlocks(markdown: string): Block[] {
  const blocks: Block[] = [];
  const fence = /^```([^\n`]*)\n([\s\S]*?)^```[ \t]*$/gm;
  for (let m; (m = fence.exec(markdown));) {
    const [lang = '', ...tags] = m[1].trim().split(/\s+/);
    blocks.push({ line: markdown.slice(0, m.index).split('\n').length, lang, tags, body: m[2] });
  }
  return blocks;
}

const SHELL = ['sh', 'bash', 'shell', 'console'];
const blocks = fencedBlocks(README);
const examples = blocks.filter((b) => SHELL.includes(b.lang) && b.tags.includes('example'));

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * Runs the examples as one bash script, as a reader pasting them in order would; resolves with its exit code and
 * output.
 */
function runExamples(
  vars: Record<string, string>,
  timeoutMs: number,
): Promise<{ code: number | null; output: string; last: number }> {
  // A marker before each block tells which one failed.
  const script = examples.map((b, i) => `echo "::example ${i}::" >&2\n${b.body}`).join('\n');
  const child = spawn('bash', ['-c', script], {
    cwd: ROOT,
    env: vars,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  return new Promise((resolve) => {
    const timer = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), timeoutMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      // whatever the script left running in the background (the receiver) goes with it
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // the group is already gone
      }
      const markers = [...output.matchAll(/::example (\d+)::/g)];
      resolve({ code, output, last: Number(markers.at(-1)?.[1] ?? -1) });
    });
  });
}

describe('README examples', () => {
  it('marks every shell block that calls the service as an example, and has the walkthrough ones', () => {
    const untagged = blocks.filter(
      (b) => SHELL.includes(b.lang) && !b.tags.includes('example') && /\bcurl\b/.test(b.body),
    );
    expect(untagged.map((b) => `README.md:${b.line}`)).toEqual([]);
    expect(examples.length).toBeGreaterThanOrEqual(5);
    const all = examples.map((b) => b.body).join('\n');
    for (const route of [
      '/admin/users',
      '/gateway/apis/oas',
      '/portal-api/webhooks',
      '/portal-api/apps',
      '/portal-api/access_requests',
      '/approve',
      '/deliveries',
    ]) {
      expect(all).toContain(route);
    }
  });

  it('has examples that fail loudly: strict mode first, and curl that fails on an error status', () => {
    expect(examples[0].body.split('\n')[0]).toBe('set -euo pipefail');
    const lax = examples
      .flatMap((b) => b.body.split('\n').map((text, i) => ({ text, line: b.line + 1 + i })))
      // a probe that only waits for a port is allowed to ignore the status
      .filter(({ text }) => /\bcurl\b/.test(text) && !/\bcurl -fsS\b/.test(text) && !/-o \/dev\/null/.test(text));
    expect(lax.map(({ line, text }) => `README.md:${line}: ${text.trim()}`)).toEqual([]);
  });

  it('shows the shipped example files as they are', () => {
    const shown = blocks.filter((b) => b.tags.some((t) => t.startsWith('examples/')));
    expect(shown.length).toBeGreaterThan(0);
    for (const b of shown) {
      const file = b.tags.find((t) => t.startsWith('examples/'))!;
      expect({ file, body: b.body }).toEqual({ file, body: readFileSync(join(ROOT, file), 'utf8') });
    }
    // every file the examples read is shipped
    for (const [, file] of examples
      .map((b) => b.body)
      .join('\n')
      .matchAll(/\b(examples\/[\w.-]+)/g)) {
      expect(() => readFileSync(join(ROOT, file))).not.toThrow();
    }
  });

  describe('against a started service', () => {
    const env = useTestEnv();
    let service: ServiceProcess;
    // As on a fresh clone: no secrets configured, so the service generates them into its data folder
    // and the examples read them from there.
    const dataDir = mkdtempSync(join(tmpdir(), 'gwm-readme-'));

    beforeAll(async () => {
      const { GATEWAY_SECRET, ADMIN_SECRET, PORTAL_API_TOKEN, ENCRYPTION_KEY, ...vars } = env.vars;
      service = env.adopt(await ServiceProcess.start({ ...vars, DATA_DIR: dataDir }));
    });
    afterAll(() => {
      rmSync(dataDir, { recursive: true, force: true });
      rmSync(join(ROOT, 'receiver.log'), { force: true }); // what the walkthrough's receiver printed
    });

    it('runs every example in order, and each one succeeds', async () => {
      const result = await runExamples(
        {
          PATH: process.env.PATH ?? '',
          HOME: process.env.HOME ?? '/tmp',
          BASE_URL: `http://127.0.0.1:${service.port}`,
          DATA_DIR: dataDir,
          RECEIVER_PORT: String(await freePort()),
        },
        90_000,
      );
      const failed =
        result.code === 0
          ? null
          : { block: `README.md:${examples[result.last]?.line}`, code: result.code, output: result.output };
      expect(failed).toBeNull();
      // the receiver verified the approval's signature and printed the event
      expect(result.output).toMatch(/\{"Event":"AccessRequestApproved","Message":\{/);
    }, 120_000);
  });
});
