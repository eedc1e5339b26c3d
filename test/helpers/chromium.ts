import { accessSync, constants, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BrowserContext, chromium } from 'playwright-core';

/**
 * Finds a Chromium without downloading anything: CHROMIUM_PATH if set; Debian's chromium where installed
 * (unless CONSOLE_TEST_SKIP_SYSTEM_CHROMIUM=1, to exercise the fallback as a fresh machine would); else the
 * build shipped inside the @sparticuz/chromium npm package, which it unpacks into the temp folder once.
 */
export async function findChromium(): Promise<{ path: string; source: string }> {
  if (process.env.CHROMIUM_PATH) return { path: process.env.CHROMIUM_PATH, source: 'CHROMIUM_PATH' };
  if (process.env.CONSOLE_TEST_SKIP_SYSTEM_CHROMIUM !== '1') {
    for (const candidate of ['/usr/bin/chromium', '/usr/bin/chromium-browser']) {
      if (executable(candidate)) return { path: candidate, source: 'system' };
    }
  }
  const packaged = (await import('@sparticuz/chromium')).default;
  return { path: await packaged.executablePath(), source: '@sparticuz/chromium' };
}

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Flags that keep a headless Chromium off the network except for what the page itself asks. */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
];

export interface LaunchedBrowser {
  /** A fresh profile's browser context: open pages with context.newPage(). */
  context: BrowserContext;
  /** Where the executable came from: CHROMIUM_PATH, system or @sparticuz/chromium. */
  source: string;
  close(): Promise<void>;
}

/**
 * Launches the Chromium found above with a fresh profile (--user-data-dir), removed on close; `locale` and
 * `timezoneId` set what the pages see of the browser's language and zone.
 */
export async function launchChromium(opts: { locale?: string; timezoneId?: string } = {}): Promise<LaunchedBrowser> {
  const { path, source } = await findChromium();
  const profile = mkdtempSync(join(tmpdir(), 'console-test-profile-'));
  try {
    const context = await chromium.launchPersistentContext(profile, {
      executablePath: path,
      headless: true,
      args: CHROMIUM_ARGS,
      viewport: { width: 1280, height: 860 },
      ...opts,
    });
    return {
      context,
      source,
      close: async () => {
        await context.close();
        rmSync(profile, { recursive: true, force: true });
      },
    };
  } catch (err) {
    rmSync(profile, { recursive: true, force: true });
    throw err;
  }
}
