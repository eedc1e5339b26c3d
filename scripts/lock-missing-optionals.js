'use strict';
/**
 * The registry this project installs from lacks some platform-specific optional packages
 * (e.g. @swc/core-darwin-arm64, @msgpackr-extract/*-win32-x64). npm then leaves them out of
 * package-lock.json, and `npm ci` refuses the lock as "out of sync". This adds an entry for each
 * missing optional package, with the os/cpu/libc its name declares, so `npm ci` knows it does not
 * apply to this platform and skips it. Run after changing dependencies: `node scripts/lock-missing-optionals.js`.
 */
const { readFileSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');

const file = join(__dirname, '..', 'package-lock.json');
const lock = JSON.parse(readFileSync(file, 'utf8'));
const OS = ['darwin', 'win32', 'linux', 'android', 'freebsd', 'openharmony', 'sunos', 'aix', 'netbsd', 'openbsd'];
const CPU = {
  x64: 'x64',
  arm64: 'arm64',
  arm: 'arm',
  ia32: 'ia32',
  ppc64: 'ppc64',
  s390x: 's390x',
  loong64: 'loong64',
  riscv64: 'riscv64',
  x86: 'ia32',
};

function platformOf(name) {
  const tokens = name.split('/').pop().split('-');
  const os = tokens.find((t) => OS.includes(t));
  const cpu = tokens.map((t) => CPU[t]).find(Boolean);
  const libc = tokens.some((t) => t.startsWith('musl'))
    ? 'musl'
    : tokens.some((t) => t.startsWith('gnu')) && os === 'linux'
      ? 'glibc'
      : undefined;
  return { os, cpu, libc };
}

let added = 0;
for (const [path, entry] of Object.entries(lock.packages)) {
  for (const [dep, spec] of Object.entries(entry.optionalDependencies ?? {})) {
    const key = `${path ? `${path}/` : ''}node_modules/${dep}`;
    const hoisted = `node_modules/${dep}`;
    if (lock.packages[key] || lock.packages[hoisted]) continue;
    const { os, cpu, libc } = platformOf(dep);
    if (!os || !cpu) {
      console.warn(`skipping ${dep}: cannot tell its platform from the name`);
      continue;
    }
    lock.packages[hoisted] = {
      version: String(spec).replace(/^[\^~=]/, ''),
      ...(entry.dev ? { dev: true } : {}),
      optional: true,
      os: [os],
      cpu: [cpu],
      ...(libc ? { libc: [libc] } : {}),
    };
    added++;
  }
}
writeFileSync(file, JSON.stringify(lock, null, 2) + '\n');
console.log(`added ${added} missing optional platform package(s) to package-lock.json`);
