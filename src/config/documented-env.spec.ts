import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getMetadataStorage } from 'class-validator';
import { loadConfig } from './app-config';
import { EnvDto } from './env.dto';

const ROOT = join(__dirname, '..', '..');
const secrets = {
  GATEWAY_SECRET: 'g'.repeat(20),
  ADMIN_SECRET: 'a'.repeat(20),
  PORTAL_API_TOKEN: 'p'.repeat(20),
  ENCRYPTION_KEY: 'ab'.repeat(32),
};

/** Every variable the configuration reads: the properties EnvDto validates. */
const variables = [
  ...new Set(
    getMetadataStorage()
      .getTargetValidationMetadatas(EnvDto, '', true, false)
      .map((m) => m.propertyName),
  ),
];

const example = readFileSync(join(ROOT, '.env.example'), 'utf8');
/** The variables `.env.example` sets, with their values (a commented-out line only names one). */
const exampleValues = Object.fromEntries(
  [...example.matchAll(/^([A-Z][A-Z0-9_]+)=(.*)$/gm)].map((m) => [m[1], m[2].trim()]),
);
const exampleNames = new Set([...example.matchAll(/^#? ?([A-Z][A-Z0-9_]+)=/gm)].map((m) => m[1]));

const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
const configSection = readme.slice(
  readme.indexOf('\n## Configuration\n'),
  readme.indexOf('\n## Dashboard and admin\n'),
);
/** The Configuration table of the README: its default column, by variable. */
const readmeDefaults = Object.fromEntries(
  [...configSection.matchAll(/^\| `([A-Z][A-Z0-9_]+)` \| ([^|]*) \|/gm)].map((m) => [m[1], m[2].trim()]),
);

describe('the documented configuration (.env.example and the README)', () => {
  it('reads at least the variables the contract names', () => {
    expect(variables).toEqual(expect.arrayContaining(['PORT', 'ROLE', 'DATABASE_URL', 'LOG_LEVEL']));
  });

  it('lists in .env.example every variable the configuration reads, and none it does not', () => {
    expect(variables.filter((v) => !exampleNames.has(v))).toEqual([]);
    expect([...exampleNames].filter((v) => !v.startsWith('OTEL_') && !variables.includes(v))).toEqual([]);
  });

  it('lists in the README every variable the configuration reads, and none it does not', () => {
    expect(variables.filter((v) => !(v in readmeDefaults))).toEqual([]);
    expect(Object.keys(readmeDefaults).filter((v) => !variables.includes(v))).toEqual([]);
  });

  it('sets in .env.example only the defaults, as the README states them', () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'gwm-config-'));
    const defaults = loadConfig({ ...secrets, DATA_DIR: dataDir });
    expect(loadConfig({ ...secrets, DATA_DIR: dataDir, ...exampleValues })).toEqual(defaults);
    for (const [name, value] of Object.entries(exampleValues))
      expect([name, readmeDefaults[name]]).toEqual([name, value === '' ? 'empty' : `\`${value}\``]);
  });
});
