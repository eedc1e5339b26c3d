import { Transform } from 'class-transformer';
import {
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  Matches,
  Max,
  Min,
  Validate,
  ValidateBy,
  ValidatorConstraint,
  ValidationArguments,
  ValidatorConstraintInterface,
} from 'class-validator';
import * as ipaddr from 'ipaddr.js';
import ms from 'ms';

export const ROLES = ['api', 'worker', 'all'] as const;

/** The longest delay WEBHOOK_RETRY_SCHEDULE may give (seconds). */
const MAX_RETRY_DELAY_SECONDS = 30 * 24 * 60 * 60;
export type Role = (typeof ROLES)[number];

/**
 * A credential callers send in a header: printable ASCII, no blank at either end. A header's value is read without
 * its outer blanks and its bytes as Latin-1, so a secret with either could be configured but never presented.
 */
const HEADER_SAFE = /^[\x21-\x7e]([\x20-\x7e]*[\x21-\x7e])?$/;
const HEADER_SAFE_RULE = 'must be printable ASCII characters without a blank at either end (it is sent in a header)';

/** Plain decimal digits (with a sign) as a number; anything else (`3e3`, `0x10`, `10.0`, `ten`) as NaN. */
const toInt = ({ value }: { value: unknown }) =>
  value === undefined || value === '' ? undefined : /^\s*-?\d+\s*$/.test(String(value)) ? Number(value) : NaN;
const emptyToUndefined = ({ value }: { value: unknown }) => (value === '' ? undefined : value);
/** A word from a list (NODE_ENV, ROLE, LOG_LEVEL): `Worker`, ` api` or `INFO` is meant as the word, and read so. */
const keyword = ({ value }: { value: unknown }) =>
  typeof value === 'string' ? value.trim().toLowerCase() || undefined : value;

export const ENCRYPTION_KEY_RULE =
  'ENCRYPTION_KEY must be 32 bytes, as 64 hex characters or base64 (44 characters, or 43 without the padding =)';

/** Other names of the log levels: other loggers' (NestJS's log and verbose, syslog's warning) and words for none. */
const LOG_LEVEL_ALIASES: Record<string, string> = {
  warning: 'warn',
  log: 'info',
  verbose: 'trace',
  off: 'silent',
  none: 'silent',
};
const logLevel = (value: unknown) =>
  typeof value === 'string' && Object.hasOwn(LOG_LEVEL_ALIASES, value) ? LOG_LEVEL_ALIASES[value] : value;

/** An item of WEBHOOK_ALLOWED_CIDRS: a range, or one address (`127.0.0.1`, `::1`) as the range of it alone. */
export function asCidr(item: string): string {
  return item.includes('/') ? item : `${item}/${item.includes(':') ? 128 : 32}`;
}

@ValidatorConstraint({ name: 'cidrList' })
class CidrListConstraint implements ValidatorConstraintInterface {
  validate(value: unknown): boolean {
    if (typeof value !== 'string') return false;
    return splitList(value)
      .map(asCidr)
      .every((c) => {
        try {
          const [address] = ipaddr.parseCIDR(c);
          // the parser also takes the legacy IPv4 forms, where 010.0.0.0 is 8.0.0.0 and 10.1 is 10.0.0.1: a range
          // meant as 10.0.0.0/8 would quietly open another one
          return address.kind() === 'ipv6' || ipaddr.IPv4.isValidFourPartDecimal(c.slice(0, c.indexOf('/')));
        } catch {
          return false;
        }
      });
  }
  defaultMessage(): string {
    return 'WEBHOOK_ALLOWED_CIDRS must be a comma-separated list of CIDR ranges such as 127.0.0.0/8,::1/128, or single addresses such as 127.0.0.1 (IPv4 as four decimal numbers without leading zeros)';
  }
}

/**
 * A duration with its unit (`90s`, `30m`, `5d`, `1.5h`, `2 days`), in milliseconds; null when it is not one.
 * A bare number is refused: minutes or seconds, nobody could tell.
 */
export function parseDuration(value: string | undefined): number | null {
  if (typeof value !== 'string' || /^\s*[\d.]+\s*$/.test(value)) return null;
  let parsed: number | undefined;
  try {
    parsed = ms(value.trim() as ms.StringValue);
  } catch {
    return null;
  }
  return typeof parsed === 'number' && Number.isFinite(parsed) && parsed > 0 ? parsed : null;
}

@ValidatorConstraint({ name: 'duration' })
class DurationConstraint implements ValidatorConstraintInterface {
  validate(value: unknown, args: ValidationArguments): boolean {
    const parsed = parseDuration(value as string);
    const [maxMs] = args.constraints ?? [];
    return parsed !== null && parsed >= 1000 && (maxMs === undefined || parsed <= maxMs);
  }
  defaultMessage(args: ValidationArguments): string {
    const [maxMs] = args.constraints ?? [];
    return maxMs === undefined
      ? `${args.property} must be a duration of at least 1s with its unit, e.g. 5d, 12h, 30m or 90s`
      : `${args.property} must be a duration from 1s to ${ms(maxMs)} with its unit, e.g. 30s, 90s or 2m`;
  }
}

/** The longest DATABASE_STATEMENT_TIMEOUT: no statement of a request or of a worker's pass is meant to run longer. */
export const MAX_STATEMENT_TIMEOUT_MS = 3600 * 1000;

/** The longest SHUTDOWN_TIMEOUT: a stop is not meant to take longer, and timers cannot wait past about 24 days. */
export const MAX_SHUTDOWN_TIMEOUT_MS = 3600 * 1000;

/**
 * Whether the Postgres client can read a connection URL as it does: it percent-encodes spaces and stray `%` first,
 * and takes `user@/db` as a URL without a host. What it cannot read would otherwise fail the start with a stack trace.
 */
function pgCanRead(url: string): boolean {
  const encoded = / |%[^a-f0-9]|%[a-f0-9][^a-f0-9]/i.test(url) ? encodeURI(url).replace(/%25(\d\d)/g, '%$1') : url;
  return URL.canParse(encoded) || URL.canParse(encoded.replace('@/', '@___DUMMY___/'));
}

export function splitList(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

/** The raw environment, as strings, validated once at boot. Only src/config reads process.env. */
export class EnvDto {
  /** Any value: one that is none of production, development, test runs as development (the start says so). */
  @IsOptional()
  @Transform(keyword)
  @IsString()
  NODE_ENV?: string;

  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(0)
  @Max(65535)
  PORT?: number;

  @IsOptional()
  @Transform(emptyToUndefined)
  @IsString()
  HOST?: string;

  @IsOptional()
  @Transform(keyword)
  @IsIn(ROLES)
  ROLE?: Role;

  @IsOptional()
  @Transform(emptyToUndefined)
  @Matches(/^postgres(ql)?:\/\//, { message: 'DATABASE_URL must be a postgres:// or postgresql:// URL' })
  @ValidateBy({
    name: 'postgresUrl',
    validator: {
      validate: (value: unknown) => typeof value === 'string' && pgCanRead(value),
      defaultMessage: () =>
        'DATABASE_URL is not a URL (a port from 0 to 65535; characters such as # or / in the password percent-encoded)',
    },
  })
  DATABASE_URL?: string;

  @IsOptional()
  @Transform(emptyToUndefined)
  @Validate(DurationConstraint, [MAX_STATEMENT_TIMEOUT_MS])
  DATABASE_STATEMENT_TIMEOUT?: string;

  @IsOptional()
  @Transform(emptyToUndefined)
  @Matches(/^rediss?(-cluster)?:\/\//, {
    message:
      'REDIS_URL must be a redis:// or rediss:// URL, or redis-cluster://host:port,host:port,... for a Redis Cluster',
  })
  REDIS_URL?: string;

  /** Seed nodes of a Redis Cluster (host:port,host:port,...); parsed by the config loader. */
  @IsOptional()
  @Transform(emptyToUndefined)
  @IsString()
  REDIS_CLUSTER_NODES?: string;

  @IsOptional()
  @Transform(emptyToUndefined)
  // in braces as the start prints it ({gwm-1a2b3c4d}) or as BullMQ's own docs write one ({bull}): the same prefix
  @Matches(/^(\{[A-Za-z0-9_.:-]{1,64}\}|[A-Za-z0-9_.:-]{1,64})$/, {
    message: 'QUEUE_PREFIX must be 1-64 characters of letters, digits, _ . : -, optionally in braces ({gwm-prod})',
  })
  QUEUE_PREFIX?: string;

  @IsOptional()
  @Transform(emptyToUndefined)
  @IsString()
  @Matches(HEADER_SAFE, { message: `GATEWAY_SECRET ${HEADER_SAFE_RULE}` })
  GATEWAY_SECRET?: string;

  @IsOptional()
  @Transform(emptyToUndefined)
  @IsString()
  @Matches(HEADER_SAFE, { message: `ADMIN_SECRET ${HEADER_SAFE_RULE}` })
  ADMIN_SECRET?: string;

  @IsOptional()
  @Transform(emptyToUndefined)
  @IsString()
  @Matches(HEADER_SAFE, { message: `PORTAL_API_TOKEN ${HEADER_SAFE_RULE}` })
  PORTAL_API_TOKEN?: string;

  @IsOptional()
  // base64 with or without its padding, in the standard or the URL-safe alphabet (crypto's 'base64url' has none);
  // outside production also 32 characters taken as they are (see encryptionKey); blanks at either end are dropped
  @Transform(({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() || undefined : value))
  @Matches(/^([0-9a-fA-F]{64}|[A-Za-z0-9+/]{43}=?|[A-Za-z0-9_-]{43}=?|[\x21-\x7e]{32})$/, {
    message: ENCRYPTION_KEY_RULE,
  })
  ENCRYPTION_KEY?: string;

  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(1000)
  DASHBOARD_PAGE_SIZE?: number;

  @IsOptional()
  @Validate(CidrListConstraint)
  WEBHOOK_ALLOWED_CIDRS?: string;

  @IsOptional()
  @Transform(emptyToUndefined)
  @Matches(/^\s*\d+(\.\d+)?(\s*,\s*\d+(\.\d+)?)*\s*$/, {
    message: 'WEBHOOK_RETRY_SCHEDULE must be a comma-separated list of seconds, e.g. 0,5,300 or 0,0.5,1',
  })
  @ValidateBy({
    name: 'retryScheduleBounds',
    validator: {
      validate: (value: unknown) =>
        typeof value !== 'string' || value.split(',').every((v) => Number(v) <= MAX_RETRY_DELAY_SECONDS),
      defaultMessage: () =>
        `WEBHOOK_RETRY_SCHEDULE must not wait more than ${MAX_RETRY_DELAY_SECONDS} seconds (30 days) before an attempt`,
    },
  })
  WEBHOOK_RETRY_SCHEDULE?: string;

  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(1000)
  WEBHOOK_CONCURRENCY?: number;

  @IsOptional()
  @Transform(emptyToUndefined)
  @Validate(DurationConstraint)
  WEBHOOK_DISABLE_AFTER?: string;
  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(36500)
  DELIVERY_RETENTION_DAYS?: number;

  @IsOptional()
  @Transform(emptyToUndefined)
  @Validate(DurationConstraint)
  IDEMPOTENCY_KEY_TTL?: string;

  @IsOptional()
  @Transform(emptyToUndefined)
  @Validate(DurationConstraint, [MAX_SHUTDOWN_TIMEOUT_MS])
  SHUTDOWN_TIMEOUT?: string;

  @IsOptional()
  @Transform(emptyToUndefined)
  @Matches(/^https?:\/\//, { message: 'DCR_REGISTRATION_ENDPOINT must be an http(s) URL' })
  @ValidateBy({
    name: 'httpUrl',
    validator: {
      // what the HTTP client cannot send to would fail every registration as an unreachable provider
      validate: (value: unknown) => typeof value === 'string' && URL.canParse(value) && new URL(value).hostname !== '',
      defaultMessage: () => 'DCR_REGISTRATION_ENDPOINT is not a URL with a host, e.g. https://idp.example.com/register',
    },
  })
  DCR_REGISTRATION_ENDPOINT?: string;

  @IsOptional()
  @Transform(emptyToUndefined)
  @IsString()
  @Matches(/^[^\p{Cc}]+$/u, { message: 'DCR_INITIAL_ACCESS_TOKEN must be one line without control characters' })
  DCR_INITIAL_ACCESS_TOKEN?: string;

  @IsOptional()
  @Transform((arg) => logLevel(keyword(arg)))
  @IsIn(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], {
    message: `LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent (or ${Object.keys(LOG_LEVEL_ALIASES).join(', ')})`,
  })
  LOG_LEVEL?: string;

  @IsOptional()
  @Transform(emptyToUndefined)
  @IsString()
  DATA_DIR?: string;
}
