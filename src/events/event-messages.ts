import { applyDecorators, Type } from '@nestjs/common';
import { ApiCallbacks, ApiExtraModels, ApiProperty, ApiSchema } from '@nestjs/swagger';
import { EMITTED_EVENTS, EmittedEvent } from './event-names';

/**
 * The `Message` of every event this service emits, as delivered to webhooks. Each one carries the keys the
 * portal product documents for it (so receivers written for the product work unchanged) and keeps the keys
 * we sent before: a superset, never a rename. Times are RFC 3339 in UTC with milliseconds. `ByUser` is the
 * integer UserID of the application the event concerns. Never credentials or other secrets.
 *
 * These classes are the documented schemas (OpenAPI components) and, through `MessageOf`, the return types of
 * the functions that build the messages, so the code cannot send a key the documents do not show or miss one.
 */

const RFC3339 = {
  type: 'string',
  format: 'date-time',
  example: '2026-11-22T10:30:00.123Z',
  description: 'RFC 3339, UTC, with milliseconds',
} as const;
const USER = { type: 'integer', example: 7, description: 'UserID of the application' } as const;

/** AccessRequestCreated, AccessRequestApproved and AccessRequestRejected. */
export class AccessRequestEventMessage {
  @ApiProperty({ type: 'integer', example: 12, description: 'the access request' })
  ID: number;

  @ApiProperty({ type: 'integer', example: 3, description: 'the application' })
  AppID: number;

  @ApiProperty({ ...USER, description: 'UserID of the application the request is for' })
  ByUser: number;

  @ApiProperty({
    enum: ['pending', 'approved', 'rejected'],
    example: 'approved',
    description: 'the status after the change',
  })
  Status: string;

  @ApiProperty({
    type: 'integer',
    isArray: true,
    example: [4, 5],
    description: 'catalogue ids of the products, as given at creation; [] when none were',
  })
  ProductIDs: number[];

  @ApiProperty({
    type: 'integer',
    example: 2,
    description: 'catalogue id of the plan, as given at creation; 0 when none was',
  })
  PlanID: number;

  @ApiProperty(RFC3339)
  CreatedAt: string;

  @ApiProperty(RFC3339)
  UpdatedAt: string;

  @ApiProperty({ ...USER, description: 'UserID of the application (same value as ByUser)' })
  UserID: number;

  @ApiProperty({ example: 'Public catalogue' })
  Catalogue: string;

  @ApiProperty({ example: 'Weather app', description: "the application's name" })
  Client: string;

  @ApiProperty({ example: 'Free plan' })
  Plan: string;

  @ApiProperty({ type: [String], example: ['weather-api', 'maps-api'], description: 'product names' })
  Products: string[];

  @ApiProperty({ enum: ['authToken', 'oauth2.0'], example: 'authToken' })
  AuthType: string;
}

/** ApplicationRegistered: an application was created. */
export class ApplicationRegisteredMessage {
  @ApiProperty({ type: 'integer', example: 3, description: 'the application' })
  ID: number;

  @ApiProperty({ example: 'Weather app' })
  Name: string;

  @ApiProperty({ ...USER, description: 'the UserID given for the application' })
  UserID: number;

  @ApiProperty(RFC3339)
  CreatedAt: string;

  @ApiProperty({ example: 'Reads the weather' })
  Description: string;

  @ApiProperty({ example: 'https://app.example.com/callback' })
  RedirectURLs: string;

  @ApiProperty({ enum: ['personal', 'team', 'organisation'], example: 'organisation' })
  Visibility: string;
}

/** CredentialRegistered: a credential was issued to an approved access request (never its secret values). */
export class CredentialRegisteredMessage {
  @ApiProperty({ type: 'integer', example: 21, description: 'the credential' })
  ID: number;

  @ApiProperty(USER)
  ByUser: number;

  @ApiProperty({ type: 'integer', example: 12, description: 'the access request it was issued to' })
  AccessRequestID: number;

  @ApiProperty({ type: 'integer', example: 3, description: 'the application' })
  AppID: number;

  @ApiProperty(RFC3339)
  CreatedAt: string;

  @ApiProperty({ ...USER, description: 'UserID of the application (same value as ByUser)' })
  UserID: number;

  @ApiProperty({ enum: ['authToken', 'oauth2.0'], example: 'oauth2.0' })
  AuthType: string;

  @ApiProperty({ example: '3f1c0b9a7d2e4c55', description: 'oauth2.0: the client id; "" for authToken' })
  OAuthClientID: string;
}

const WEBHOOK_ID = {
  format: 'uuid',
  example: '8d1c7c1e-3f4b-4a55-9f0e-2b8f6d0c1a22',
  description: 'the webhook the event is about (never delivered to it)',
} as const;

/** WebhookDisabled: the service switched a webhook off, or an operator did. */
export class WebhookDisabledMessage {
  @ApiProperty(WEBHOOK_ID)
  WebhookID: string;

  @ApiProperty({ example: 'Approvals to CRM' })
  Name: string;

  @ApiProperty({ example: 'https://hooks.example.com/portal' })
  URL: string;

  @ApiProperty({
    enum: ['gone', 'failing', 'manual'],
    example: 'failing',
    description:
      'gone: the subscriber answered 410; failing: every attempt failed for WEBHOOK_DISABLE_AFTER; manual: set inactive through the API',
  })
  Reason: string;

  @ApiProperty(RFC3339)
  DisabledAt: string;
}

/** WebhookEnabled: an inactive webhook was made active again. */
export class WebhookEnabledMessage {
  @ApiProperty(WEBHOOK_ID)
  WebhookID: string;

  @ApiProperty({ example: 'Approvals to CRM' })
  Name: string;

  @ApiProperty({ example: 'https://hooks.example.com/portal' })
  URL: string;

  @ApiProperty(RFC3339)
  EnabledAt: string;
}

/** DeliveryFailed: a delivery used its whole retry schedule without a 2xx. */
export class DeliveryFailedMessage {
  @ApiProperty(WEBHOOK_ID)
  WebhookID: string;

  @ApiProperty({ example: 'Approvals to CRM' })
  Name: string;

  @ApiProperty({ example: 'https://hooks.example.com/portal' })
  URL: string;

  @ApiProperty({
    format: 'uuid',
    description:
      'the delivery (its webhook-id header); see GET /portal-api/webhooks/{WebhookID}/deliveries/{DeliveryID}',
  })
  DeliveryID: string;

  @ApiProperty({ format: 'uuid' })
  EventID: string;

  @ApiProperty({ example: 'AccessRequestApproved', description: 'the event the delivery carried' })
  Event: string;

  @ApiProperty({ type: 'integer', example: 8 })
  AttemptCount: number;

  @ApiProperty({
    type: 'integer',
    example: 500,
    description: 'HTTP status of the last attempt; 0 when there was no answer',
  })
  LastStatusCode: number;

  @ApiProperty({
    enum: ['timeout', 'connection', 'blocked_address', 'http_status', 'unroutable', 'rejected'],
    example: 'http_status',
    description: 'why the last attempt failed',
  })
  LastError: string;

  @ApiProperty(RFC3339)
  FailedAt: string;
}

/** A message class seen as a plain object type: what the builders return and the outbox stores. */
export type MessageOf<T> = { [K in keyof T]: T[K] };

export const EVENT_MESSAGES: Record<EmittedEvent, Type> = {
  AccessRequestCreated: AccessRequestEventMessage,
  AccessRequestApproved: AccessRequestEventMessage,
  AccessRequestRejected: AccessRequestEventMessage,
  ApplicationRegistered: ApplicationRegisteredMessage,
  CredentialRegistered: CredentialRegisteredMessage,
  WebhookDisabled: WebhookDisabledMessage,
  DeliveryFailed: DeliveryFailedMessage,
  WebhookEnabled: WebhookEnabledMessage,
};

const WHEN: Record<EmittedEvent, string> = {
  AccessRequestCreated: 'an access request was created (status pending, or approved with ProvisionImmediately)',
  AccessRequestApproved: 'an access request was approved (its credentials are issued in the same change)',
  AccessRequestRejected: 'an access request was rejected (its credentials, if any, are revoked)',
  ApplicationRegistered: 'an application was created',
  CredentialRegistered: 'a credential was issued to an approved access request',
  WebhookDisabled:
    'a webhook was switched off (410 Gone, failing for too long, or by hand); not delivered to that webhook',
  DeliveryFailed:
    'a delivery used its whole retry schedule without success; not delivered to that webhook, nor raised for deliveries of operational events',
  WebhookEnabled: 'an inactive webhook was made active again; not delivered to that webhook',
};

const SIGNATURE_HEADERS =
  'the Standard Webhooks headers webhook-id (the same on every retry), webhook-timestamp and webhook-signature: ' +
  'one signature per key, space-separated, over "id.timestamp.body": `v1,<base64 HMAC-SHA256 under the whsec_ secret>` ' +
  'for SignatureScheme v1, `v1a,<base64 Ed25519 signature, verified with the whpk_ public key>` for v1a; during a key ' +
  "rotation's grace period the previous key signs too. A GET or DELETE delivery carries no body and is signed over the empty string.";

/** The delivered body `{Event, Message, Timestamp}` of `event`, as its own schema named `<event>Event`. */
function envelope(event: EmittedEvent): Type {
  @ApiSchema({
    name: `${event}Event`,
    description:
      `Delivered when ${WHEN[event]}. Sent with the webhook's Method to its URL, with its Headers, ` +
      `Content-Type: application/json and ${SIGNATURE_HEADERS}`,
  })
  class Envelope {
    @ApiProperty({ enum: [event], example: event })
    Event: string;

    @ApiProperty({ type: EVENT_MESSAGES[event] })
    Message: unknown;

    @ApiProperty({ ...RFC3339, description: 'when the change happened: RFC 3339, UTC, with milliseconds' })
    Timestamp: string;
  }
  return Envelope;
}

/** Each emitted event's delivered body, its schema and when it is sent: for the OpenAPI document. */
export const EVENT_ENVELOPES: { event: EmittedEvent; schema: Type; when: string }[] = EMITTED_EVENTS.map((event) => ({
  event,
  schema: envelope(event),
  when: WHEN[event],
}));

/**
 * Documents every emitted event on the operation that subscribes to them: one OpenAPI callback per event,
 * its request body the event's schema, so generated clients and receiver authors get typed events.
 */
export const ApiEventCallbacks = () =>
  applyDecorators(
    ApiExtraModels(...EVENT_ENVELOPES.map((e) => e.schema), ...new Set(Object.values(EVENT_MESSAGES))),
    ApiCallbacks(
      ...EVENT_ENVELOPES.map(({ event, schema }) => ({
        name: event,
        callbackUrl: '{$request.body#/URL}',
        method: 'post',
        requestBody: { type: schema },
        expectedResponse: {
          status: 200,
          description:
            'any 2xx: delivered. 410 deactivates the webhook; 429/503 are retried on the schedule, or later if Retry-After asks (up to 1 hour); anything else is retried on the schedule',
        },
      })),
    ),
  );

/** The Message of a test send (`POST /portal-api/webhooks/{id}/test`). */
export class WebhookTestMessage {
  @ApiProperty({ format: 'uuid', description: 'the webhook the test was sent to' })
  WebhookID: string;

  @ApiProperty({
    example: 'checking the new endpoint',
    description: 'the Note given with the test send; "" when none was',
  })
  Note: string;
}

@ApiSchema({
  name: 'WebhookTestEvent',
  description:
    'Delivered to one webhook when a test send is asked for it, and to no other webhook (no webhook subscribes to WebhookTest). ' +
    `Sent like every event: with the webhook's Method to its URL, with its Headers, Content-Type: application/json and ${SIGNATURE_HEADERS}`,
})
export class WebhookTestEvent {
  @ApiProperty({ enum: ['WebhookTest'], example: 'WebhookTest' })
  Event: string;

  @ApiProperty({ type: WebhookTestMessage })
  Message: WebhookTestMessage;

  @ApiProperty({ ...RFC3339, description: 'when the test was asked for: RFC 3339, UTC, with milliseconds' })
  Timestamp: string;
}
