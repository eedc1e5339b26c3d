import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import {
  ArrayNotEmpty,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsNotEmpty,
  IsObject,
  IsOptional,
  IsString,
  Matches,
  Max,
  Min,
  ValidateBy,
  ValidateNested,
  ValidationArguments,
} from 'class-validator';
import { codePointLength, MaxLength } from '../../common/http/max-length.decorator';
import { OptionalBody } from '../../common/http/optional-body.decorator';
import { OptionalNullable } from '../../common/http/optional-nullable.decorator';
import { IsOptionalNotNull } from '../../common/http/optional-not-null.decorator';
import { IsRequiredText } from '../../common/http/required-text.decorator';
import { MAX_OBJECT_MEMBERS, OBJECT_MEMBERS_NOTE } from '../../common/http/input-policy';
import { WEBHOOK_EVENTS } from '../../events/event-names';
import { SIGNATURE_SCHEMES } from '../send/signing';
import { DESTINATION_TYPES, DestinationType } from '../send/destination-registry';
import { HTTP_URL_MESSAGE, isHttpUrl } from '../send/http-destination';
import {
  HEADER_LIMITS,
  HEADER_NAME,
  HEADER_VALUE,
  HEADER_VALUE_MESSAGE,
  headerChars,
  headersTooLong,
  HeaderUsage,
  RESERVED_HEADERS,
  tooManyHeaders,
} from '../send/header-fields';
import { FilterInvalid, parseEventFilter } from '../filter/event-filter';

export const WEBHOOK_METHODS = ['POST', 'PUT', 'PATCH', 'GET', 'DELETE'] as const;

/** Longest grace period of a key rotation: 7 days. */
export const MAX_GRACE_PERIOD_SECONDS = 604_800;
/** Grace period when none is given, also for a scheme switch by PUT: 24 hours. */
export const DEFAULT_GRACE_PERIOD_SECONDS = 86_400;
const SCHEME_MESSAGE = `SignatureScheme must be one of ${SIGNATURE_SCHEMES.join(', ')}`;
const SCHEME_DESCRIPTION =
  'v1: HMAC-SHA256 with a shared whsec_ secret; v1a: Ed25519, receivers hold only the whpk_ public key';

/** Method is taken in any case and stored in upper case. */
const METHOD_DESCRIPTION = 'taken in any case (`post` is `POST`)';
/** `post` means POST. */
const upper = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.toUpperCase() : value);

const URL_DESCRIPTION =
  'where deliveries go, by Type: http(s)://... (http); amqp(s)://user:password@host:5672/vhost (rabbitmq); nats://user:password@host:4222 or tls://... (nats). Answers show a URL with its password masked (user:***@), and sending that masked URL back on PUT keeps the stored one; the credentials of an http URL are sent as HTTP Basic authentication';
const TYPE_DESCRIPTION =
  'http: an HTTP request to URL (the default); rabbitmq: a message published to Options.Exchange with Options.RoutingKey (publisher confirms); nats: a JetStream message on Options.Subject (the stream acknowledges it)';
const OPTIONS_DESCRIPTION =
  "the type's options: rabbitmq takes Exchange (default '': the default exchange) and RoutingKey (default: the event name); nats takes Subject (required); http takes none";
const FILTER_DESCRIPTION =
  'only events this filter accepts are delivered (null: every event of Events). A rule: {"path": "Message.Plan.Name", "eq": "gold"} with one of eq, in, gt, gte, lt, lte, exists, prefix, regex (+ ignoreCase), over the delivered event (paths start with Event, Message or Timestamp); combine with {"all": [...]}, {"any": [...]}, {"not": rule}';
const TYPE_MESSAGE = `Type must be one of ${DESTINATION_TYPES.join(', ')}`;

/**
 * URL: for an http webhook (the default Type, or Type http given) an absolute http(s) URL; a broker's URL is
 * checked by its destination type when the webhook is saved (a PUT may change URL without naming Type).
 */
function DestinationUrl(defaultType: DestinationType | null): PropertyDecorator {
  return ValidateBy({
    name: 'destinationUrl',
    validator: {
      validate: (value: unknown, args?: ValidationArguments) => {
        const type = (args?.object as { Type?: unknown }).Type ?? defaultType;
        return type !== 'http' || isHttpUrl(value);
      },
      defaultMessage: () => HTTP_URL_MESSAGE,
    },
  });
}

/** A destination's Options: at most this many, each a string of at most MAX_OPTION_LENGTH characters. */
const MAX_OPTIONS = 8;
const MAX_OPTION_LENGTH = 1024;

function OptionsField(): PropertyDecorator {
  return applyDecorators(
    ApiPropertyOptional({
      type: 'object',
      maxProperties: MAX_OPTIONS,
      additionalProperties: { type: 'string', maxLength: MAX_OPTION_LENGTH },
      description: OPTIONS_DESCRIPTION,
      example: { Exchange: 'portal', RoutingKey: 'access.approved' },
    }),
    // as sent: class-transformer would drop members named like Object's methods (toString, valueOf), so such an
    // option would be ignored where any other unknown one is refused
    Transform(({ obj, key }: { obj: Record<string, unknown>; key: string }) => obj[key]),
    IsOptionalNotNull(),
    ValidateBy({
      name: 'destinationOptions',
      validator: {
        validate: (value: unknown) =>
          typeof value === 'object' &&
          value !== null &&
          !Array.isArray(value) &&
          Object.keys(value).length <= MAX_OPTIONS &&
          Object.values(value).every((v) => typeof v === 'string' && codePointLength(v) <= MAX_OPTION_LENGTH),
        defaultMessage: () =>
          `Options must be an object of at most ${MAX_OPTIONS} string values, e.g. {"Subject": "portal.events"}`,
      },
    }),
  );
}

function FilterField(): PropertyDecorator {
  return applyDecorators(
    ApiPropertyOptional({
      type: 'object',
      additionalProperties: true,
      maxProperties: MAX_OBJECT_MEMBERS,
      nullable: true,
      description: `${FILTER_DESCRIPTION}; ${OBJECT_MEMBERS_NOTE}`,
      example: {
        all: [
          { path: 'Message.Plan.Name', in: ['Gold', 'Platinum'] },
          { path: 'Message.ID', gt: 100 },
        ],
      },
    }),
    IsOptional(),
    ValidateBy({
      name: 'eventFilter',
      validator: {
        validate: (value: unknown) => filterRefusal(value) === null,
        defaultMessage: (args?: ValidationArguments) => filterRefusal(args?.value) ?? 'Filter is not valid',
      },
    }),
  );
}

/** Why a filter cannot be used (naming the wrong part), or null when it can. */
export function filterRefusal(value: unknown, at = 'Filter'): string | null {
  try {
    parseEventFilter(value, at);
    return null;
  } catch (err) {
    if (err instanceof FilterInvalid) return err.message;
    throw err;
  }
}

function TypeField(create: boolean): PropertyDecorator {
  return applyDecorators(
    ApiPropertyOptional({
      enum: DESTINATION_TYPES,
      ...(create ? { default: 'http' } : {}),
      description: TYPE_DESCRIPTION,
    }),
    IsOptionalNotNull(),
    IsIn(DESTINATION_TYPES, { message: TYPE_MESSAGE }),
  );
}
const NOT_RESERVED = new RegExp(`^(?!(${RESERVED_HEADERS.join('|')})$)`, 'i');

export class WebhookHeaderInput {
  @ApiProperty({
    example: 'X-Api-Key',
    maxLength: HEADER_LIMITS.nameLength,
    minLength: 1,
    // the document says what is refused, so a client checking against it is not surprised by a 422
    pattern: HEADER_NAME.source,
    description: `an HTTP header name (a token), not one the service sets itself or that belongs to the connection (${RESERVED_HEADERS.join(', ')})`,
  })
  @IsString()
  @IsNotEmpty()
  @MaxLength(HEADER_LIMITS.nameLength)
  @Matches(HEADER_NAME, { message: 'Name must be a valid HTTP header name' })
  @Matches(NOT_RESERVED, {
    message: `Name must not be one of the headers the service sets itself or that belong to the connection (${RESERVED_HEADERS.join(', ')})`,
  })
  Name: string;

  @ApiProperty({
    example: 'abc123',
    maxLength: HEADER_LIMITS.valueLength,
    pattern: HEADER_VALUE.source,
    description:
      'visible ASCII or Latin-1 characters (up to U+00FF), with spaces or tabs only between them: no control characters, line breaks, or leading or trailing whitespace',
  })
  @IsString()
  @MaxLength(HEADER_LIMITS.valueLength)
  @Matches(HEADER_VALUE, { message: HEADER_VALUE_MESSAGE })
  Value: string;
}

const HEADERS_LIMITS_DESCRIPTION = `at most ${HEADER_LIMITS.count} headers per webhook, and at most ${HEADER_LIMITS.total} characters of names and values together (one header: Name at most ${HEADER_LIMITS.nameLength}, Value at most ${HEADER_LIMITS.valueLength}), so that every delivery is a request HTTP servers accept`;

const HEADER_NOT_AN_OBJECT = 'each of Headers must be an object {"Name": ..., "Value": ...}';

/**
 * How many headers a body's Headers holds and how long they are together: the whole of the webhook's headers, as
 * Headers replaces them all. The same limits as headers added one at a time under /headers. Something that is not
 * an array is IsArray's to report.
 */
function HeadersLimits(): PropertyDecorator {
  return applyDecorators(
    ValidateBy({
      name: 'headersCount',
      validator: {
        validate: (value: unknown) => !Array.isArray(value) || value.length <= HEADER_LIMITS.count,
        defaultMessage: (args?: ValidationArguments) => tooManyHeaders(usage(args?.value).count),
      },
    }),
    ValidateBy({
      name: 'headersDistinct',
      validator: {
        validate: (value: unknown) => !Array.isArray(value) || repeatedHeader(value) === null,
        defaultMessage: (args?: ValidationArguments) => {
          const [first, again] = repeatedHeader(args?.value as unknown[]) ?? [0, 0];
          return `Headers.${again}.Name repeats Headers.${first}.Name: a header is named once (names are case-insensitive)`;
        },
      },
    }),
    ValidateBy({
      name: 'headersTotalLength',
      validator: {
        validate: (value: unknown) => !Array.isArray(value) || usage(value).chars <= HEADER_LIMITS.total,
        defaultMessage: (args?: ValidationArguments) => headersTooLong(usage(args?.value).chars),
      },
    }),
  );
}

/** The positions of the first header whose name (case-insensitively) an earlier one has, or null. */
function repeatedHeader(headers: unknown[]): [number, number] | null {
  const seen = new Map<string, number>();
  for (const [i, h] of headers.entries()) {
    const name = typeof h === 'object' && h !== null ? (h as { Name?: unknown }).Name : undefined;
    if (typeof name !== 'string') continue;
    const key = name.toLowerCase();
    const first = seen.get(key);
    if (first !== undefined) return [first, i];
    seen.set(key, i);
  }
  return null;
}

function usage(headers: unknown): HeaderUsage {
  if (!Array.isArray(headers)) return { count: 0, chars: 0 };
  return {
    count: headers.length,
    chars: headers.reduce<number>((n, h) => n + (typeof h === 'object' && h !== null ? headerChars(h) : 0), 0),
  };
}

/** Flow control fields, the same on create and update: RateLimit may be null (no limit), Ordered may not. */
function RateLimitField(): PropertyDecorator {
  return applyDecorators(
    ApiPropertyOptional({
      type: Number,
      nullable: true,
      minimum: 1,
      maximum: 10000,
      description:
        'deliveries per second at most, across every worker; over it a delivery waits its turn (not an attempt, not a failure). null or absent: no limit',
    }),
    IsOptional(),
    IsInt({ message: 'RateLimit must be an integer number of deliveries per second' }),
    Min(1, { message: 'RateLimit must be at least 1' }),
    Max(10000, { message: 'RateLimit must be at most 10000' }),
  );
}

function OrderedField(): PropertyDecorator {
  return applyDecorators(
    ApiPropertyOptional({
      default: false,
      description:
        'deliveries are sent one at a time in event order: the next waits until the previous is delivered or has finally failed',
    }),
    IsOptionalNotNull(),
    IsBoolean({ message: 'Ordered must be a boolean' }),
  );
}

export class CreateWebhookDto {
  @ApiProperty({ example: 'Approvals to CRM' })
  @IsRequiredText(255, { requiredMessage: 'Name is required' })
  Name: string;

  @ApiProperty({ example: 'https://hooks.example.com/portal', description: URL_DESCRIPTION })
  @IsString({ message: 'URL is required' })
  @DestinationUrl('http')
  @MaxLength(2048)
  URL: string;

  @TypeField(true)
  Type?: DestinationType;

  @OptionsField()
  Options?: Record<string, string>;

  @FilterField()
  Filter?: unknown;

  @OptionalNullable({ enum: WEBHOOK_METHODS, default: 'POST', description: METHOD_DESCRIPTION })
  @Transform(upper)
  @IsIn(WEBHOOK_METHODS, { message: `Method must be one of ${WEBHOOK_METHODS.join(', ')}` })
  Method?: string;

  @OptionalNullable({ description: 'seconds', minimum: 1, maximum: 60, default: 30 })
  @IsInt({ message: 'Timeout must be an integer number of seconds' })
  @Min(1, { message: 'Timeout must be at least 1 second' })
  @Max(60, { message: 'Timeout must be at most 60 seconds' })
  Timeout?: number;

  @ApiProperty({ enum: WEBHOOK_EVENTS, isArray: true, example: ['AccessRequestApproved'] })
  @IsArray({ message: 'Events must be a non-empty array' })
  @ArrayNotEmpty({ message: 'Events must be a non-empty array' })
  @IsIn(WEBHOOK_EVENTS, {
    each: true,
    message: `each of Events must be one of ${WEBHOOK_EVENTS.join(', ')}`,
  })
  Events: string[];

  @OptionalNullable({
    type: [WebhookHeaderInput],
    maxItems: HEADER_LIMITS.count,
    description: `headers sent with every delivery (also managed under /headers): ${HEADERS_LIMITS_DESCRIPTION}`,
  })
  @IsArray()
  @HeadersLimits()
  // each an object: ValidateNested checks the members of an inner array as headers, so [[{...}]] would pass
  @IsObject({ each: true, message: HEADER_NOT_AN_OBJECT })
  @ValidateNested({ each: true })
  @Type(() => WebhookHeaderInput)
  Headers?: WebhookHeaderInput[];

  @ApiPropertyOptional({ default: true, description: 'inactive webhooks get no deliveries' })
  @IsOptionalNotNull()
  @IsBoolean({ message: 'Active must be a boolean' })
  Active?: boolean;

  @OptionalNullable({ enum: SIGNATURE_SCHEMES, default: 'v1', description: SCHEME_DESCRIPTION })
  @IsIn(SIGNATURE_SCHEMES, { message: SCHEME_MESSAGE })
  SignatureScheme?: 'v1' | 'v1a';

  @RateLimitField()
  RateLimit?: number | null;

  @OrderedField()
  Ordered?: boolean;
}

/**
 * PUT: every field optional; those given replace the stored ones (Headers, when given, replace all headers). An
 * explicit null is refused (but for RateLimit and Filter, where it removes them); on POST, a member with a default
 * takes null as absent.
 */
export class UpdateWebhookDto {
  @ApiPropertyOptional()
  @IsOptionalNotNull()
  @IsRequiredText(255, { requiredMessage: 'Name must not be empty' })
  Name?: string;

  @ApiPropertyOptional({ description: URL_DESCRIPTION })
  @IsOptionalNotNull()
  @IsString()
  @DestinationUrl(null)
  @MaxLength(2048)
  URL?: string;

  @ApiPropertyOptional({
    enum: DESTINATION_TYPES,
    description: `${TYPE_DESCRIPTION}. Changing Type needs the new type's URL (and Options)`,
  })
  @IsOptionalNotNull()
  @IsIn(DESTINATION_TYPES, { message: TYPE_MESSAGE })
  Type?: DestinationType;

  @OptionsField()
  Options?: Record<string, string>;

  @FilterField()
  Filter?: unknown;

  @ApiPropertyOptional({ enum: WEBHOOK_METHODS, description: METHOD_DESCRIPTION })
  @IsOptionalNotNull()
  @Transform(upper)
  @IsIn(WEBHOOK_METHODS, { message: `Method must be one of ${WEBHOOK_METHODS.join(', ')}` })
  Method?: string;

  @ApiPropertyOptional({ minimum: 1, maximum: 60 })
  @IsOptionalNotNull()
  @IsInt({ message: 'Timeout must be an integer number of seconds' })
  @Min(1, { message: 'Timeout must be at least 1 second' })
  @Max(60, { message: 'Timeout must be at most 60 seconds' })
  Timeout?: number;

  @ApiPropertyOptional({ enum: WEBHOOK_EVENTS, isArray: true })
  @IsOptionalNotNull()
  @IsArray({ message: 'Events must be a non-empty array' })
  @ArrayNotEmpty({ message: 'Events must be a non-empty array' })
  @IsIn(WEBHOOK_EVENTS, {
    each: true,
    message: `each of Events must be one of ${WEBHOOK_EVENTS.join(', ')}`,
  })
  Events?: string[];

  @ApiPropertyOptional({
    type: [WebhookHeaderInput],
    maxItems: HEADER_LIMITS.count,
    description: `replace all of the webhook's headers: ${HEADERS_LIMITS_DESCRIPTION}`,
  })
  @IsOptionalNotNull()
  @IsArray()
  @HeadersLimits()
  // each an object: ValidateNested checks the members of an inner array as headers, so [[{...}]] would pass
  @IsObject({ each: true, message: HEADER_NOT_AN_OBJECT })
  @ValidateNested({ each: true })
  @Type(() => WebhookHeaderInput)
  Headers?: WebhookHeaderInput[];

  @ApiPropertyOptional({
    description: 'true re-enables a webhook that was switched off (and clears DisabledReason and DisabledAt)',
  })
  @IsOptionalNotNull()
  @IsBoolean({ message: 'Active must be a boolean' })
  Active?: boolean;

  @ApiPropertyOptional({
    enum: SIGNATURE_SCHEMES,
    description: `${SCHEME_DESCRIPTION}. Switching scheme is a key rotation with the default grace period (24 h): deliveries carry signatures by the new and the old key until it ends. GET /webhooks/{id}/secret shows the new key.`,
  })
  @IsOptionalNotNull()
  @IsIn(SIGNATURE_SCHEMES, { message: SCHEME_MESSAGE })
  SignatureScheme?: 'v1' | 'v1a';

  @RateLimitField()
  RateLimit?: number | null;

  @OrderedField()
  Ordered?: boolean;
}

export class WebhookHeaderResponse {
  @ApiProperty() ID: string;
  @ApiProperty() Name: string;
  @ApiProperty() Value: string;
}

/** A header as its own routes answer it: with the webhook it belongs to, as the portal's header routes do. */
export class WebhookHeaderShowResponse extends WebhookHeaderResponse {
  @ApiProperty({ format: 'uuid' }) WebhookID: string;
}

export class WebhookResponse {
  @ApiProperty({ format: 'uuid' }) ID: string;
  @ApiProperty() Name: string;
  @ApiProperty() URL: string;
  @ApiProperty({ enum: WEBHOOK_METHODS }) Method: string;
  @ApiProperty({ type: 'integer', description: 'seconds' }) Timeout: number;
  @ApiProperty({ type: [WebhookHeaderResponse] }) Headers: WebhookHeaderResponse[];
  @ApiProperty({ enum: WEBHOOK_EVENTS, isArray: true }) Events: string[];
  @ApiProperty() Active: boolean;
  @ApiProperty({ example: '2026-11-22 10:15' }) CreatedAt: string;
  @ApiProperty({ example: '2026-11-22 10:15' }) UpdatedAt: string;
  @ApiProperty({ enum: SIGNATURE_SCHEMES, description: SCHEME_DESCRIPTION }) SignatureScheme: string;
  @ApiProperty({
    type: String,
    nullable: true,
    enum: ['gone', 'failing', 'manual'],
    description:
      'why the webhook is inactive: gone (the subscriber answered 410), failing (every attempt failed for WEBHOOK_DISABLE_AFTER), manual (set inactive through the API); null when active',
  })
  DisabledReason: string | null;
  @ApiProperty({ type: String, nullable: true, format: 'date-time', description: 'RFC 3339; null when active' })
  DisabledAt: string | null;
  @ApiProperty({ type: 'integer', nullable: true, description: 'deliveries per second at most; null: no limit' })
  RateLimit: number | null;
  @ApiProperty({ description: 'deliveries are sent one at a time in event order' }) Ordered: boolean;
  @ApiPropertyOptional({ enum: DESTINATION_TYPES, description: `${TYPE_DESCRIPTION}. Absent: http` })
  Type?: string;
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'string' },
    description: `${OPTIONS_DESCRIPTION}. Absent for http`,
  })
  Options?: Record<string, string>;
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    description: `${FILTER_DESCRIPTION}. Absent when the webhook has none`,
  })
  Filter?: unknown;
}

/**
 * The answer to a create or update: the webhook, plus what would stop its deliveries under the current configuration.
 */
export class SavedWebhookResponse extends WebhookResponse {
  @ApiPropertyOptional({
    type: [String],
    description:
      'present only when deliveries to URL will fail under the current configuration (e.g. a loopback or private address that WEBHOOK_ALLOWED_CIDRS does not allow); the webhook is saved either way',
  })
  Warnings?: string[];
}

const SECRET_DESCRIPTION =
  'what a receiver verifies signatures with: the whsec_ secret (v1), or the whpk_ public key (v1a; the private key never leaves the service)';
const PUBLIC_KEY_DESCRIPTION = 'v1a: whpk_ + base64 of the raw 32-byte Ed25519 public key; null for v1';

export class CreatedWebhookResponse extends SavedWebhookResponse {
  @ApiProperty({
    description: `${SECRET_DESCRIPTION}; shown in full only here and at GET /webhooks/{id}/secret`,
    example: 'whsec_...',
  })
  Secret: string;

  @ApiProperty({ type: String, nullable: true, description: PUBLIC_KEY_DESCRIPTION, example: null })
  PublicKey: string | null;
}

export class WebhookSecretResponse {
  @ApiProperty({ description: SECRET_DESCRIPTION, example: 'whsec_...' }) Secret: string;
  @ApiProperty({ enum: SIGNATURE_SCHEMES }) SignatureScheme: string;
  @ApiProperty({ type: String, nullable: true, description: PUBLIC_KEY_DESCRIPTION, example: null }) PublicKey:
    string | null;
  @ApiProperty({
    type: String,
    nullable: true,
    format: 'date-time',
    description:
      "during a rotation's grace period: when deliveries stop being signed with the previous key too (RFC 3339); null otherwise",
  })
  PreviousSecretExpiresAt: string | null;
}

@OptionalBody()
export class RotateSecretDto {
  @OptionalNullable({
    minimum: 0,
    maximum: MAX_GRACE_PERIOD_SECONDS,
    default: DEFAULT_GRACE_PERIOD_SECONDS,
    description: 'how long deliveries stay signed with the old key too (seconds); 0 retires it at once',
  })
  @IsInt({ message: 'GracePeriodSeconds must be an integer number of seconds' })
  @Min(0, { message: 'GracePeriodSeconds must not be negative' })
  @Max(MAX_GRACE_PERIOD_SECONDS, { message: `GracePeriodSeconds must be at most ${MAX_GRACE_PERIOD_SECONDS} (7 days)` })
  GracePeriodSeconds?: number;
}

@OptionalBody()
export class WebhookTestDto {
  @OptionalNullable({
    maxLength: 1024,
    description: "carried in the test event's Message",
    example: 'checking the new endpoint',
  })
  @IsString({ message: 'Note must be a string' })
  @MaxLength(1024, { message: 'Note must be at most 1024 characters' })
  Note?: string;
}

export class WebhookTestResponse {
  @ApiProperty({
    format: 'uuid',
    description: 'the test delivery: GET /webhooks/{id}/deliveries/{DeliveryID}; also its webhook-id header',
  })
  DeliveryID: string;
  @ApiProperty({ format: 'uuid' }) EventID: string;
}

export class FilterTestDto {
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    maxProperties: MAX_OBJECT_MEMBERS,
    description: `the filter to try (as a webhook's Filter). ${FILTER_DESCRIPTION}; ${OBJECT_MEMBERS_NOTE}`,
    example: { path: 'Message.Plan.Name', eq: 'Gold' },
  })
  @ValidateBy({
    name: 'eventFilter',
    validator: {
      validate: (value: unknown) => value !== undefined && value !== null && filterRefusal(value) === null,
      defaultMessage: (args?: ValidationArguments) =>
        args?.value === undefined || args?.value === null ? 'Filter is required' : (filterRefusal(args.value) ?? ''),
    },
  })
  Filter: unknown;

  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    maxProperties: MAX_OBJECT_MEMBERS,
    description: `a sample event as it is delivered: {"Event": "...", "Message": {...}, "Timestamp": "..."}; ${OBJECT_MEMBERS_NOTE}`,
    example: {
      Event: 'AccessRequestApproved',
      Message: { ID: 7, Plan: { Name: 'Gold' } },
      Timestamp: '2026-11-22T10:15:00.000Z',
    },
  })
  @ValidateBy({
    name: 'sampleEvent',
    validator: {
      validate: (value: unknown) => typeof value === 'object' && value !== null && !Array.isArray(value),
      defaultMessage: () => 'Event must be an object: the event as delivered, {"Event", "Message", "Timestamp"}',
    },
  })
  Event: Record<string, unknown>;
}

export class FilterTestResponse {
  @ApiProperty({ description: 'whether the filter accepts the event (a webhook with it would get a delivery)' })
  Matches: boolean;
}
