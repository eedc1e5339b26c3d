import { Module } from '@nestjs/common';
import { EventsService } from './events.service';

/** The outbox writer: a feature that emits events imports this module and records them in its transactions. */
@Module({
  providers: [EventsService],
  exports: [EventsService],
})
export class EventsModule {}
