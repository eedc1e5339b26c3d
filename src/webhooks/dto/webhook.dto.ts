import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import { ArrayNotEmpty, IsArray, IsBoolean, IsIn, IsInt, IsNotEmpty, IsOptional, IsString, IsUrl, Matches, Max, MaxLength, Min, ValidateNested } from 'class-validator';
import { IsOptionalNotNull } from '../../common/http/optional-not-null';
import { WEBHOOK_EVENTS } from '../../events/event-names';

export const WEBHOOK_METHODS = ['POST', 'PUT', 'PATCH', 'GET', 'DELETE'] as const;

/** `post` means POST. */
const upper = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.toUpperCase() : value);

const URL_RULES = { require_protocol: true, protocols: ['http', 'https'], require_tld: false, require_valid_protocol: true };
const URL_MESSAGE = 'URL must be an absolute http(s) URL';
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
// Headers the service sets itself on every delivery; a webhook may not override them.
export const RESERVED_HEADERS = ['content-type', 'content-length', 'host', 'transfer-encoding', 'connection', 'webhook-id', 'webhook-timestamp', 'webhook-signature'];
const NOT_RESERVED = new RegExp(`^(?!(${RESERVED_HEADERS.join('|')})$)`, 'i');

export class WebhookHeaderInput {
  @ApiProperty({ example: 'X-Api-Key' })
  @IsString() @IsNotEmpty() @MaxLength(256) @Matches(HEADER_NAME, { message: 'Name must be a valid HTTP header name' })
  @Matches(NOT_RESERVED, { message: `Name must not be one of the headers the service sets itself (${RESERVED_HEADERS.join(', ')})` })
  Name: string;

  @ApiProperty({ example: 'abc123' })
  @IsString() @MaxLength(8192) @Matches(/^[^\r\n]*$/, { message: 'Value must not contain line breaks' })
  Value: string;
}

export class CreateWebhookDto {
  @ApiProperty({ example: 'Approvals to CRM' })
  @IsString() @IsNotEmpty({ message: 'Name is required' }) @MaxLength(255)
  Name: string;

  @ApiProperty({ example: 'https://hooks.example.com/portal' })
  @IsString({ message: 'URL is required' }) @IsUrl(URL_RULES, { message: URL_MESSAGE }) @MaxLength(2048)
  URL: string;

  @ApiPropertyOptional({ enum: WEBHOOK_METHODS, default: 'POST' })
  @IsOptional() @Transform(upper) @IsIn(WEBHOOK_METHODS as unknown as string[], { message: `Method must be one of ${WEBHOOK_METHODS.join(', ')}` })
  Method?: string;

  @ApiPropertyOptional({ description: 'seconds', minimum: 1, maximum: 60, default: 30 })
  @IsOptional() @IsInt({ message: 'Timeout must be an integer number of seconds' }) @Min(1, { message: 'Timeout must be at least 1 second' }) @Max(60, { message: 'Timeout must be at most 60 seconds' })
  Timeout?: number;

  @ApiProperty({ enum: WEBHOOK_EVENTS, isArray: true, example: ['AccessRequestApproved'] })
  @IsArray({ message: 'Events must be a non-empty array' }) @ArrayNotEmpty({ message: 'Events must be a non-empty array' })
  @IsIn(WEBHOOK_EVENTS as unknown as string[], { each: true, message: `each of Events must be one of ${WEBHOOK_EVENTS.join(', ')}` })
  Events: string[];

  @ApiPropertyOptional({ type: [WebhookHeaderInput], description: 'headers sent with every delivery (also managed under /headers)' })
  @IsOptional() @IsArray() @ValidateNested({ each: true }) @Type(() => WebhookHeaderInput)
  Headers?: WebhookHeaderInput[];

  @ApiPropertyOptional({ default: true, description: 'inactive webhooks get no deliveries' })
  @IsOptional() @IsBoolean({ message: 'Active must be a boolean' })
  Active?: boolean;
}

/** PUT: every field optional; those given replace the stored ones (Headers, when given, replace all headers). An explicit null is refused, as on POST. */
export class UpdateWebhookDto {
  @ApiPropertyOptional()
  @IsOptionalNotNull() @IsString() @IsNotEmpty({ message: 'Name must not be empty' }) @MaxLength(255)
  Name?: string;

  @ApiPropertyOptional()
  @IsOptionalNotNull() @IsString() @IsUrl(URL_RULES, { message: URL_MESSAGE }) @MaxLength(2048)
  URL?: string;

  @ApiPropertyOptional({ enum: WEBHOOK_METHODS })
  @IsOptionalNotNull() @Transform(upper) @IsIn(WEBHOOK_METHODS as unknown as string[], { message: `Method must be one of ${WEBHOOK_METHODS.join(', ')}` })
  Method?: string;

  @ApiPropertyOptional({ minimum: 1, maximum: 60 })
  @IsOptionalNotNull() @IsInt({ message: 'Timeout must be an integer number of seconds' }) @Min(1, { message: 'Timeout must be at least 1 second' }) @Max(60, { message: 'Timeout must be at most 60 seconds' })
  Timeout?: number;

  @ApiPropertyOptional({ enum: WEBHOOK_EVENTS, isArray: true })
  @IsOptionalNotNull() @IsArray({ message: 'Events must be a non-empty array' }) @ArrayNotEmpty({ message: 'Events must be a non-empty array' })
  @IsIn(WEBHOOK_EVENTS as unknown as string[], { each: true, message: `each of Events must be one of ${WEBHOOK_EVENTS.join(', ')}` })
  Events?: string[];

  @ApiPropertyOptional({ type: [WebhookHeaderInput] })
  @IsOptionalNotNull() @IsArray() @ValidateNested({ each: true }) @Type(() => WebhookHeaderInput)
  Headers?: WebhookHeaderInput[];

  @ApiPropertyOptional()
  @IsOptionalNotNull() @IsBoolean({ message: 'Active must be a boolean' })
  Active?: boolean;
}

export class WebhookHeaderResponse {
  @ApiProperty() ID: string;
  @ApiProperty() Name: string;
  @ApiProperty() Value: string;
}

export class WebhookResponse {
  @ApiProperty({ format: 'uuid' }) ID: string;
  @ApiProperty() Name: string;
  @ApiProperty() URL: string;
  @ApiProperty({ enum: WEBHOOK_METHODS }) Method: string;
  @ApiProperty({ description: 'seconds' }) Timeout: number;
  @ApiProperty({ type: [WebhookHeaderResponse] }) Headers: WebhookHeaderResponse[];
  @ApiProperty({ enum: WEBHOOK_EVENTS, isArray: true }) Events: string[];
  @ApiProperty() Active: boolean;
  @ApiProperty({ example: '2026-11-22 10:15' }) CreatedAt: string;
  @ApiProperty({ example: '2026-11-22 10:15' }) UpdatedAt: string;
}

export class CreatedWebhookResponse extends WebhookResponse {
  @ApiProperty({ description: 'Standard Webhooks signing secret; shown in full only here and at GET /webhooks/{id}/secret', example: 'whsec_...' })
  Secret: string;
}

export class WebhookSecretResponse {
  @ApiProperty({ example: 'whsec_...' }) Secret: string;
}
