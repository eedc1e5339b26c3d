import { DynamicModule, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { EventsService } from './events.service';
import { OutboxEventEntity } from './outbox-event.entity';
import { OutboxRelay } from './outbox-relay.service';

/** The outbox: features record events through EventsService; worker processes run the relay. */
@Module({})
export class EventsModule {
  static register(opts: { relay: boolean }): DynamicModule {
    return {
      module: EventsModule,
      global: true,
      imports: [TypeOrmModule.forFeature([OutboxEventEntity])],
      providers: [EventsService, ...(opts.relay ? [OutboxRelay] : [])],
      exports: [EventsService, TypeOrmModule],
    };
  }
}
