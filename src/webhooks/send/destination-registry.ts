import { Inject, Injectable, OnApplicationShutdown, Provider, Type } from '@nestjs/common';
import { Destination, DestinationTarget, OutgoingMessage, SendResult } from './destination';
import { HttpDestination } from './http-destination';
import { NatsDestination } from './nats-destination';
import { RabbitMqDestination } from './rabbitmq-destination';

// eslint-disable-next-line no-control-regex -- finding them is the point
const WHITESPACE_OR_CONTROL = /[\s\u0000-\u001f\u007f]/;

/**
 * Every destination type: a new type is a class implementing Destination in a file of its own, listed in
 * DESTINATIONS, with its name in DESTINATION_TYPES (what the API accepts; the registry checks both agree).
 */
export const DESTINATION_TYPES = ['http', 'rabbitmq', 'nats'] as const;
export type DestinationType = (typeof DESTINATION_TYPES)[number];
export const DESTINATIONS: Type<Destination>[] = [HttpDestination, RabbitMqDestination, NatsDestination];

const EVERY_DESTINATION = Symbol('every destination');

/** The destinations and the registry, for a module's providers. */
export const DESTINATION_PROVIDERS: Provider[] = [
  ...DESTINATIONS,
  { provide: EVERY_DESTINATION, useFactory: (...all: Destination[]) => all, inject: DESTINATIONS },
];

/**
 * Maps a webhook's type to its destination: checks and masks configurations on write, sends on delivery,
 * and closes every destination's connections once the workers have stopped.
 */
@Injectable()
export class DestinationRegistry implements OnApplicationShutdown {
  private readonly byType: Map<string, Destination>;

  constructor(@Inject(EVERY_DESTINATION) destinations: Destination[]) {
    this.byType = new Map(destinations.map((d) => [d.type, d]));
    const names = [...this.byType.keys()].sort().join(', ');
    if (names !== [...DESTINATION_TYPES].sort().join(', ') || destinations.length !== DESTINATION_TYPES.length)
      throw new Error(`destination types (${names}) are not DESTINATION_TYPES (${DESTINATION_TYPES.join(', ')})`);
  }

  get(type: string): Destination {
    const d = this.byType.get(type);
    if (!d) throw new Error(`unknown destination type ${type}`);
    return d;
  }

  /** Every reason the URL and options cannot be used for `type`, each naming its field; empty when fine. */
  validate(type: string, url: string, options: Record<string, string>): string[] {
    const d = this.get(type);
    const errors: string[] = [];
    let parsed: URL | null = null;
    try {
      parsed = new URL(url);
    } catch {
      errors.push(d.urlMessage);
    }
    // written out with its "//": the parser would read "http:host" or "http:\\host" as "http://host/"; and without
    // whitespace or control characters, which it would drop or escape
    if (
      parsed &&
      (!d.schemes.includes(parsed.protocol.slice(0, -1)) ||
        !/^[a-z][a-z0-9+.-]*:\/\//i.test(url) ||
        WHITESPACE_OR_CONTROL.test(url))
    )
      errors.push(d.urlMessage);
    for (const name of Object.keys(options)) {
      if (!Object.hasOwn(d.options, name)) {
        const known = Object.keys(d.options);
        errors.push(
          `Options.${name} is not an option of Type ${type} (${known.length ? `it takes ${known.join(', ')}` : 'it takes none'})`,
        );
      }
    }
    for (const [name, spec] of Object.entries(d.options)) {
      const value = options[name];
      if (value === undefined) {
        if (spec.required) errors.push(`Options.${name} is required for Type ${type}: ${spec.description}`);
      } else if (!spec.pattern.test(value)) {
        errors.push(`Options.${name} must be ${spec.patternMessage}`);
      }
    }
    if (parsed && errors.length === 0) errors.push(...d.validate(parsed, options));
    return errors;
  }

  mask(type: string, url: string): string {
    return this.get(type).mask(url);
  }

  send(type: string, target: DestinationTarget, message: OutgoingMessage): Promise<SendResult> {
    return this.get(type).send(target, message);
  }

  async onApplicationShutdown(): Promise<void> {
    await Promise.all([...this.byType.values()].map((d) => d.close().catch(() => undefined)));
  }
}
