import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import {
  ClusterTarget,
  SHARED_QUEUE_PREFIX,
  hashTaggedPrefix,
  isClusterUrl,
  parseClusterTarget,
} from '../queue/redis-connection';
import { asCidr, ENCRYPTION_KEY_RULE, EnvDto, parseDuration, Role, splitList } from './env.dto';
import { makeDirectory } from '../common/files/make-directory';
import { ConfigError } from './data-directory';

export { ConfigError, makeDataDirectory } from './data-directory';

export const DEFAULT_RETRY_SCHEDULE = [0, 5, 300, 1800, 7200, 18000, 36000, 36000];
/** A webhook whose every attempt has failed for this long is switched off. */
export const DEFAULT_DISABLE_AFTER_MS = 5 * 24 * 3600 * 1000;
/** How long an idempotency key's answer is kept (and the key refused for another request). */
export const DEFAULT_IDEMPOTENCY_KEY_TTL_MS = 24 * 3600 * 1000;
/** How long a stop may take before the process exits regardless (exit code 1). */
export const DEFAULT_SHUTDOWN_TIMEOUT_MS = 60 * 1000;
/** How long one statement may run in Postgres unless DATABASE_STATEMENT_TIMEOUT says otherwise. */
export const DEFAULT_STATEMENT_TIMEOUT_MS = 30 * 1000;

/** The one typed configuration object. Everything else injects this; nothing else reads process.env. */
export class AppConfig {
  env: 'production' | 'development' | 'test';
  port: number;
  host: string;
  role: Role;
  dataDir: string;
  logLevel: string;
  /** `statementTimeoutMs`: how long one statement may run in Postgres (see StatementBounds). */
  database: { url?: string; statementTimeoutMs: number };
  /**
   * Redis: one server (`url`) or a cluster (`cluster`); `prefix` starts every key and is a cluster hash tag
   * such as `{gwm}`.
   */
  /**
   * `prefix` starts every Redis key. With no QUEUE_PREFIX it is `{gwm}` until the start settles it to the database's
   * own (`prefixFromDatabase`), and `deployment` to the database's identity (see settleQueuePrefix).
   */
  redis: { url?: string; cluster?: ClusterTarget; prefix: string; prefixFromDatabase: boolean; deployment?: string };
  secrets: { gateway: string; admin: string; portal: string; encryptionKey: Buffer };
  dashboard: { pageSize: number };
  webhooks: {
    allowedCidrs: string[];
    retrySchedule: number[];
    concurrency: number;
    disableAfterMs: number;
    retentionDays: number;
  };
  dcr: { registrationEndpoint?: string; initialAccessToken?: string };
  idempotency: { keyTtlMs: number };
  /** How long a stop (SIGTERM, SIGINT, SIGHUP) may take; past it the process says so and exits with 1. */
  shutdownTimeoutMs: number;
  /** Names of secrets that were generated into dataDir because the environment had none. */
  generatedSecrets: string[];
  /** What the configuration takes outside production but should not be so (said at start, one line each). */
  warnings: string[];

  get runsApi(): boolean {
    return this.role === 'api' || this.role === 'all';
  }

  get runsWorker(): boolean {
    return this.role === 'worker' || this.role === 'all';
  }
}

type SecretName = 'GATEWAY_SECRET' | 'ADMIN_SECRET' | 'PORTAL_API_TOKEN' | 'ENCRYPTION_KEY';
const SECRET_NAMES: SecretName[] = ['GATEWAY_SECRET', 'ADMIN_SECRET', 'PORTAL_API_TOKEN', 'ENCRYPTION_KEY'];

/** Rules on the form of a value: when one fails, the others (ranges, lengths) say nothing true about it. */
const FORM_RULES = ['isInt', 'isIn', 'isString', 'matches'];

function reasonsOf(constraints: Record<string, string>): string[] {
  const form = FORM_RULES.filter((rule) => constraints[rule]).map((rule) => constraints[rule]);
  return form.length ? form : Object.values(constraints);
}

/** Parses and validates the environment. Throws ConfigError naming every bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): AppConfig {
  const dto = plainToInstance(EnvDto, { ...env }, { enableImplicitConversion: false });
  const errors = validateSync(dto, { whitelist: false, forbidUnknownValues: false });
  if (errors.length > 0) {
    const lines = errors.map((e) => `${e.property}: ${reasonsOf(e.constraints ?? {}).join('; ')}`);
    throw new ConfigError(`Invalid configuration:\n  ${lines.join('\n  ')}`);
  }

  const warnings: string[] = [];
  const nodeEnv = runEnvironment(dto.NODE_ENV, warnings);
  const dataDir = resolve(dto.DATA_DIR ?? '.data');
  const secretValues: Record<SecretName, string | undefined> = {
    GATEWAY_SECRET: dto.GATEWAY_SECRET,
    ADMIN_SECRET: dto.ADMIN_SECRET,
    PORTAL_API_TOKEN: dto.PORTAL_API_TOKEN,
    ENCRYPTION_KEY: dto.ENCRYPTION_KEY,
  };
  const missing = SECRET_NAMES.filter((n) => !secretValues[n]);
  if (missing.length > 0 && nodeEnv === 'production') {
    throw new ConfigError(
      `Invalid configuration:\n  ${missing.map((n) => `${n}: required when NODE_ENV=production`).join('\n  ')}`,
    );
  }
  const generated = missing.length > 0 ? fillGeneratedSecrets(dataDir, missing, secretValues) : [];
  const credentialProblems = [...shortCredentials(secretValues), ...sharedCredentials(secretValues)];
  if (nodeEnv === 'production' && credentialProblems.length)
    throw new ConfigError(`Invalid configuration:\n  ${credentialProblems.join('\n  ')}`);
  warnings.push(...credentialProblems);

  const config = new AppConfig();
  config.env = nodeEnv;
  config.port = dto.PORT ?? 3000;
  config.host = dto.HOST ?? '0.0.0.0';
  config.role = dto.ROLE ?? 'all';
  config.dataDir = dataDir;
  config.logLevel = dto.LOG_LEVEL ?? 'info';
  config.database = {
    url: dto.DATABASE_URL,
    statementTimeoutMs: parseDuration(dto.DATABASE_STATEMENT_TIMEOUT) ?? DEFAULT_STATEMENT_TIMEOUT_MS,
  };
  config.redis = {
    ...redisTarget(dto),
    prefix: hashTaggedPrefix(dto.QUEUE_PREFIX ?? SHARED_QUEUE_PREFIX),
    prefixFromDatabase: dto.QUEUE_PREFIX === undefined,
  };
  config.secrets = {
    gateway: secretValues.GATEWAY_SECRET!,
    admin: secretValues.ADMIN_SECRET!,
    portal: secretValues.PORTAL_API_TOKEN!,
    encryptionKey: encryptionKey(secretValues.ENCRYPTION_KEY!, nodeEnv, warnings),
  };
  config.dashboard = { pageSize: dto.DASHBOARD_PAGE_SIZE ?? 10 };
  config.webhooks = {
    allowedCidrs: splitList(dto.WEBHOOK_ALLOWED_CIDRS).map(asCidr),
    retrySchedule: dto.WEBHOOK_RETRY_SCHEDULE
      ? splitList(dto.WEBHOOK_RETRY_SCHEDULE).map(Number)
      : DEFAULT_RETRY_SCHEDULE,
    concurrency: dto.WEBHOOK_CONCURRENCY ?? 64,
    disableAfterMs: parseDuration(dto.WEBHOOK_DISABLE_AFTER) ?? DEFAULT_DISABLE_AFTER_MS,
    retentionDays: dto.DELIVERY_RETENTION_DAYS ?? 30,
  };
  config.dcr = {
    registrationEndpoint: dto.DCR_REGISTRATION_ENDPOINT,
    initialAccessToken: dto.DCR_INITIAL_ACCESS_TOKEN,
  };
  config.idempotency = { keyTtlMs: parseDuration(dto.IDEMPOTENCY_KEY_TTL) ?? DEFAULT_IDEMPOTENCY_KEY_TTL_MS };
  config.shutdownTimeoutMs = parseDuration(dto.SHUTDOWN_TIMEOUT) ?? DEFAULT_SHUTDOWN_TIMEOUT_MS;
  config.generatedSecrets = generated;
  config.warnings = warnings;
  return config;
}

/**
 * A credential shorter than this is easy to guess: refused with NODE_ENV=production; outside it taken all the same
 * (the variables are optional there, and a local run or a test suite may start the service with `GATEWAY_SECRET=g`),
 * and the start says so.
 */
const SHORT_CREDENTIAL = 16;

/** The credentials of the gateway, admin and portal families: one value would open two families. */
const CREDENTIAL_NAMES: SecretName[] = ['GATEWAY_SECRET', 'ADMIN_SECRET', 'PORTAL_API_TOKEN'];

function shortCredentials(values: Record<SecretName, string | undefined>): string[] {
  return CREDENTIAL_NAMES.filter((name) => values[name]!.length < SHORT_CREDENTIAL).map(
    (name) => `${name}: shorter than ${SHORT_CREDENTIAL} characters, easy to guess (refused when NODE_ENV=production)`,
  );
}

/**
 * One value for two families' credentials breaks "a credential of one family never opens another": refused with
 * NODE_ENV=production; outside it taken (a test rig may give every family `secret`), and the start says so.
 */
function sharedCredentials(values: Record<SecretName, string | undefined>): string[] {
  const lines: string[] = [];
  CREDENTIAL_NAMES.forEach((name, i) => {
    const same = CREDENTIAL_NAMES.slice(0, i).find((other) => values[other] === values[name]);
    if (same)
      lines.push(
        `${name}: the same as ${same}, so a credential of one family opens the other (refused when NODE_ENV=production)`,
      );
  });
  return lines;
}

const RUN_ENVIRONMENTS: AppConfig['env'][] = ['production', 'development', 'test'];

/** NODE_ENV as the service runs by it: none of its three values (`staging`, `ci`) is development, as unset. */
function runEnvironment(value: string | undefined, warnings: string[]): AppConfig['env'] {
  if (value === undefined) return 'development';
  if ((RUN_ENVIRONMENTS as string[]).includes(value)) return value as AppConfig['env'];
  warnings.push(`NODE_ENV: ${value} is none of ${RUN_ENVIRONMENTS.join(', ')}; running as development`);
  return 'development';
}

/** REDIS_URL names one server or (redis-cluster://) a cluster; REDIS_CLUSTER_NODES names a cluster. */
function redisTarget(dto: EnvDto): { url?: string; cluster?: ClusterTarget } {
  if (dto.REDIS_CLUSTER_NODES && dto.REDIS_URL) {
    throw new ConfigError(
      'Invalid configuration:\n  REDIS_CLUSTER_NODES: set either REDIS_URL or REDIS_CLUSTER_NODES, not both',
    );
  }
  const [name, value] = dto.REDIS_CLUSTER_NODES
    ? ['REDIS_CLUSTER_NODES', dto.REDIS_CLUSTER_NODES]
    : ['REDIS_URL', dto.REDIS_URL];
  if (!value) return { url: value };
  if (name === 'REDIS_URL' && !isClusterUrl(value)) {
    // the path names the database; anything else would quietly mean database 0, which another application may use
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      throw new ConfigError('Invalid configuration:\n  REDIS_URL: is not a URL');
    }
    if (!/^(\/(0|[1-9][0-9]{0,4})?)?$/.test(url.pathname))
      throw new ConfigError(
        'Invalid configuration:\n  REDIS_URL: its path, if any, is the database number (redis://host:6379/0)',
      );
    // options in a query (?db=2, ?password=...) would be ignored: database 0, no password
    if (url.search || url.hash)
      throw new ConfigError(
        'Invalid configuration:\n  REDIS_URL: takes no query or fragment; the database number is the path (redis://host:6379/2) and credentials go before the host (redis://user:password@host:6379)',
      );
    return { url: value };
  }
  try {
    return { cluster: parseClusterTarget(value) };
  } catch (err) {
    throw new ConfigError(`Invalid configuration:\n  ${name}: ${(err as Error).message}`);
  }
}

/**
 * The 32 bytes of ENCRYPTION_KEY: 64 hex characters or base64, as documented. Outside production, 32 characters in
 * neither form (`0123456789abcdef0123456789abcdef`, a test rig's "32-byte key") are taken as they are, and the start
 * says so; with NODE_ENV=production they are refused.
 */
function encryptionKey(value: string, env: AppConfig['env'], warnings: string[]): Buffer {
  if (value.length === 32) {
    if (env === 'production') throw new ConfigError(`Invalid configuration:\n  ENCRYPTION_KEY: ${ENCRYPTION_KEY_RULE}`);
    warnings.push(
      'ENCRYPTION_KEY: 32 characters taken as they are, not as hex or base64 (refused when NODE_ENV=production)',
    );
    return Buffer.from(value, 'latin1');
  }
  const key = /^[0-9a-fA-F]{64}$/.test(value) ? Buffer.from(value, 'hex') : Buffer.from(value, 'base64');
  if (key.length !== 32)
    throw new ConfigError('Invalid configuration:\n  ENCRYPTION_KEY: must decode to exactly 32 bytes');
  return key;
}

/** Outside production, secrets the environment lacks are generated once and kept in dataDir/secrets.json. */
function fillGeneratedSecrets(
  dataDir: string,
  missing: SecretName[],
  values: Record<SecretName, string | undefined>,
): SecretName[] {
  const file = join(dataDir, 'secrets.json');
  let stored: Partial<Record<SecretName, string>> = {};
  try {
    if (existsSync(file)) stored = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new ConfigError(
      `DATA_DIR: ${file} holds the generated secrets and cannot be read (${(err as Error).message}): fix or remove it, or set ${missing.join(', ')}`,
    );
  }
  let changed = false;
  for (const name of missing) {
    if (!stored[name]) {
      stored[name] = randomBytes(32).toString('hex');
      changed = true;
    }
    values[name] = stored[name];
  }
  if (changed) {
    try {
      makeDirectory(dataDir);
      writeFileSync(file, JSON.stringify(stored, null, 2) + '\n', { mode: 0o600 });
    } catch (err) {
      throw new ConfigError(
        `DATA_DIR: cannot keep the generated secrets in ${file} (${(err as Error).message}): set DATA_DIR to a writable directory, or set ${missing.join(', ')}`,
      );
    }
  }
  return missing;
}
