import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What each webhook subscribed to, and when. An event reaches the webhooks subscribed when it happened, but the
 * relay decides on the webhooks as they are when it claims the event, which is later whenever it lags (a worker down
 * or busy): a webhook unsubscribed (its `Events`, `Filter` or `Active` changed) in between lost the
 * event, and one subscribed in between got an event from before it asked for it.
 *
 * So a change of a webhook's subscription keeps the subscription it replaces, with the moment it ended
 * (`valid_until`: the change's `updated_at`, as a webhook's `created_at` is its creation's), and the webhook notes
 * the moment (`subscription_changed_at`). The relay reads a webhook's own columns for an event that happened after
 * that moment, and for an earlier one the kept subscription then in force (the first that ended after the event).
 * Kept only while an unrelayed event may still need it: each change removes the webhook's rows that ended over an
 * hour ago and before the oldest unrelayed event. A trigger keeps them, so every writer of a webhook (the API's
 * updates, the worker switching one off after a 410) is covered.
 */
export class WebhookSubscriptionHistory1763802300000 implements MigrationInterface {
  name = 'WebhookSubscriptionHistory1763802300000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE webhooks ADD COLUMN subscription_changed_at timestamptz`);
    await q.query(`
      CREATE TABLE webhook_subscriptions_ended (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        webhook_id uuid NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
        valid_until timestamptz NOT NULL,
        active boolean NOT NULL,
        events text[] NOT NULL,
        filter_path jsonpath
      )`);
    await q.query(`CREATE INDEX webhook_subscriptions_ended_until ON webhook_subscriptions_ended (valid_until)`);
    await q.query(
      `CREATE INDEX webhook_subscriptions_ended_webhook ON webhook_subscriptions_ended (webhook_id, valid_until)`,
    );
    await q.query(`
      CREATE FUNCTION webhooks_keep_subscription() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        ended timestamptz := GREATEST(
          CASE WHEN NEW.updated_at IS DISTINCT FROM OLD.updated_at THEN NEW.updated_at ELSE clock_timestamp() END,
          OLD.subscription_changed_at, OLD.created_at);
      BEGIN
        DELETE FROM webhook_subscriptions_ended
         WHERE webhook_id = OLD.id AND valid_until < now() - interval '1 hour'
           AND valid_until < coalesce((SELECT min(occurred_at) FROM outbox_events WHERE relayed_at IS NULL), 'infinity');
        INSERT INTO webhook_subscriptions_ended (webhook_id, valid_until, active, events, filter_path)
        VALUES (OLD.id, ended, OLD.active, OLD.events, OLD.filter_path);
        NEW.subscription_changed_at := ended;
        RETURN NEW;
      END $$`);
    await q.query(`
      CREATE TRIGGER webhooks_keep_subscription BEFORE UPDATE ON webhooks FOR EACH ROW
        WHEN (OLD.active IS DISTINCT FROM NEW.active OR OLD.events IS DISTINCT FROM NEW.events
              OR OLD.filter IS DISTINCT FROM NEW.filter)
        EXECUTE FUNCTION webhooks_keep_subscription()`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER webhooks_keep_subscription ON webhooks`);
    await q.query(`DROP FUNCTION webhooks_keep_subscription()`);
    await q.query(`DROP TABLE webhook_subscriptions_ended`);
    await q.query(`ALTER TABLE webhooks DROP COLUMN subscription_changed_at`);
  }
}
