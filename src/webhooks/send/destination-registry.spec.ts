import { Test } from '@nestjs/testing';
import { DESTINATIONS as CONSOLE_DESTINATIONS, DESTINATION_TYPES as CONSOLE_TYPES } from '../../../console/src/types';
import { AppConfig, loadConfig } from '../../config/app-config';
import { DESTINATION_PROVIDERS, DESTINATION_TYPES, DestinationRegistry } from './destination-registry';
import { HttpSender } from './http-sender';

describe('DestinationRegistry', () => {
  let registry: DestinationRegistry;
  let close: () => Promise<void>;
  beforeAll(async () => {
    const module = await Test.createTestingModule({
      providers: [
        { provide: AppConfig, useValue: loadConfig({ NODE_ENV: 'test' }) },
        HttpSender,
        ...DESTINATION_PROVIDERS,
        DestinationRegistry,
      ],
    }).compile();
    registry = module.get(DestinationRegistry);
    close = () => module.close();
  });
  afterAll(() => close());

  it('has a destination for every type the API accepts', () => {
    for (const type of DESTINATION_TYPES) expect(registry.get(type).type).toBe(type);
  });

  it('names every problem of a configuration, each with its field', () => {
    expect(registry.validate('rabbitmq', 'https://mq.example.com', { Queue: 'q', RoutingKey: 'a\nb' })).toEqual([
      'URL must be an absolute amqp(s) URL for Type rabbitmq (amqp://user:password@host:5672/vhost)',
      'Options.Queue is not an option of Type rabbitmq (it takes Exchange, RoutingKey)',
      'Options.RoutingKey must be 1 to 255 characters, no line breaks',
    ]);
    expect(registry.validate('nats', 'nats://n.example.com:4222', { Subject: 'portal.approved' })).toEqual([]);
  });

  // the console's form asks for each type's options from its own table: it must name what the service takes
  it("matches the console's form: the same types, each with the same options, required alike", () => {
    expect([...CONSOLE_TYPES]).toEqual([...DESTINATION_TYPES]);
    for (const type of DESTINATION_TYPES) {
      const service = Object.entries(registry.get(type).options).map(([name, o]) => [name, o.required]);
      expect(CONSOLE_DESTINATIONS[type].options.map((o) => [o.name, o.required])).toEqual(service);
    }
  });
});
