import { Module } from '@nestjs/common';
import { EventsService } from './events.service';
import { OutboxStore } from './outbox.store';

/** The outbox: a feature that emits events imports this module and records them in its transactions. */
@Module({
  providers: [EventsService, OutboxStore],
  exports: [EventsService, OutboxStore],
})
export class EventsModule {}
