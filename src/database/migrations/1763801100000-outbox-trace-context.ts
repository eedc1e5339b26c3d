import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The trace context (W3C `traceparent`/`tracestate`, as a propagator writes them) of the operation that
 * recorded an event, so the relay and the delivery attempts continue that trace. NULL when tracing is off.
 */
export class OutboxTraceContext1763801100000 implements MigrationInterface {
  name = 'OutboxTraceContext1763801100000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE outbox_events ADD COLUMN trace_context jsonb`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE outbox_events DROP COLUMN trace_context`);
  }
}
