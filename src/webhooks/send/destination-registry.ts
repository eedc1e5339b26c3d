import { Injectable, OnApplicationShutdown } from '@nestjs/common';
import { Destination, DestinationTarget, OutgoingMessage, SendResult } from './destination';
import { HttpDestination } from './http-destination';
import { NatsDestination } from './nats-destination';
import { RabbitMqDestination } from './rabbitmq-destination';

/** Every destination type, by name: a new type is a class in its own file, listed here and in DESTINATIONS. */
export const DESTINATION_TYPES = ['http', 'rabbitmq', 'nats'] as const;
export type DestinationType = (typeof DESTINATION_TYPES)[number];
export const DESTINATIONS = [HttpDestination, RabbitMqDestination, NatsDestination];

/**
 * Maps a webhook's type to its destination: checks and masks configurations on write, sends on delivery,
 * and closes every destination's connections once the workers have stopped.
 */
@Injectable()
export class DestinationRegistry implements OnApplicationShutdown {
  private readonly byType: Map<string, Destination>;

  constructor(http: HttpDestination, rabbitmq: RabbitMqDestination, nats: NatsDestination) {
    this.byType = new Map([http, rabbitmq, nats].map((d) => [d.type, d]));
    for (const t of DESTINATION_TYPES) if (!this.byType.has(t)) throw new Error(`no destination for type ${t}`);
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
    if (parsed && !d.schemes.includes(parsed.protocol.slice(0, -1))) errors.push(d.urlMessage);
    for (const name of Object.keys(options)) {
      if (!(name in d.options)) {
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
