import { MigrationInterface, QueryRunner } from 'typeorm';

const ATTEMPT_ERRORS = ['timeout', 'connection', 'blocked_address', 'http_status'];
const BROKER_ERRORS = ['unroutable', 'rejected'];

/**
 * Destination types and filters of webhooks. A webhook has a type (http, the default, as before; rabbitmq;
 * nats); for a broker, `url` holds the URL as shown (credentials masked) and `destination_encrypted` the URL
 * in clear, sealed like signing keys; `destination_options` its type's options (exchange, subject...). A
 * filter is kept as given (`filter`) and compiled (`filter_path`, a jsonpath that fan-out evaluates).
 * Attempts gain the brokers' error kinds. No CHECK on the type: a new type is code only. A partial index finds
 * the active webhooks with a filter by event, for fan-out's separate pass over them.
 */
export class WebhookDestinationsAndFilters1763801800000 implements MigrationInterface {
  name = 'WebhookDestinationsAndFilters1763801800000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE webhooks
        ADD COLUMN type                  text  NOT NULL DEFAULT 'http',
        ADD COLUMN destination_encrypted text,
        ADD COLUMN destination_options   jsonb NOT NULL DEFAULT '{}'::jsonb,
        ADD COLUMN filter                jsonb,
        ADD COLUMN filter_path           jsonpath,
        ADD CONSTRAINT webhooks_filter_compiled CHECK ((filter IS NULL) = (filter_path IS NULL))`);
    // fan-out judges webhooks with a filter apart: this index finds them, and is empty (free to read) when none has one
    await q.query(
      `CREATE INDEX webhooks_filtered_events ON webhooks USING gin (events) WHERE active AND filter_path IS NOT NULL`,
    );
    await this.replaceErrorCheck(q, [...ATTEMPT_ERRORS, ...BROKER_ERRORS]);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(
      `DELETE FROM webhook_delivery_attempts WHERE error IN (${BROKER_ERRORS.map((e) => `'${e}'`).join(', ')})`,
    );
    await this.replaceErrorCheck(q, ATTEMPT_ERRORS);
    await q.query(`DROP INDEX webhooks_filtered_events`);
    await q.query(`
      ALTER TABLE webhooks
        DROP CONSTRAINT webhooks_filter_compiled,
        DROP COLUMN filter_path,
        DROP COLUMN filter,
        DROP COLUMN destination_options,
        DROP COLUMN destination_encrypted,
        DROP COLUMN type`);
  }

  /** The attempts' CHECK on error kinds, whatever an earlier migration named it (partitions inherit it). */
  private async replaceErrorCheck(q: QueryRunner, kinds: string[]): Promise<void> {
    await q.query(`
      DO $$
      DECLARE c record;
      BEGIN
        FOR c IN SELECT conname FROM pg_constraint
                  WHERE conrelid = 'webhook_delivery_attempts'::regclass AND contype = 'c'
                    AND pg_get_constraintdef(oid) LIKE '%http_status%'
        LOOP
          EXECUTE format('ALTER TABLE webhook_delivery_attempts DROP CONSTRAINT %I', c.conname);
        END LOOP;
      END $$`);
    await q.query(
      `ALTER TABLE webhook_delivery_attempts ADD CONSTRAINT webhook_delivery_attempts_error_check
         CHECK (error IN (${kinds.map((k) => `'${k}'`).join(', ')}))`,
    );
  }
}
