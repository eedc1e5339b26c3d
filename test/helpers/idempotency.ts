import { randomUUID } from 'node:crypto';
import { HttpResponse } from './http-client';
import { TestApp } from './test-app';

/** A fresh Idempotency-Key. */
export const idempotencyKey = () => `k-${randomUUID()}`;

/** The headers carrying Idempotency-Key `k`. */
export const withKey = (k: string) => ({ 'idempotency-key': k });

/** The same answer again, byte for byte, marked as a replay. */
export function expectReplayOf(replay: HttpResponse, first: HttpResponse): void {
  expect(replay.status).toBe(first.status);
  expect(replay.text).toBe(first.text);
  expect(replay.headers['content-type']).toBe(first.headers['content-type']);
  expect(replay.headers['idempotent-replayed']).toBe('true');
}

/** A key whose answer the service cannot store once refuseStoredAnswers has run. */
export const unstorableKey = () => `unstorable-${randomUUID()}`;

/**
 * Makes storing the answer of a request with an unstorableKey() fail (a trigger on the keys' table), so a spec can
 * check that such a request changes nothing: the answer commits with the change or not at all.
 */
export async function refuseStoredAnswers(t: TestApp): Promise<void> {
  await t.db.query(`
    CREATE FUNCTION refuse_answer() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN RAISE EXCEPTION 'answer refused by the spec'; END $$`);
  await t.db.query(`
    CREATE TRIGGER refuse_answer BEFORE UPDATE ON idempotency_keys FOR EACH ROW
    WHEN (NEW.status IS NOT NULL AND NEW.key LIKE 'unstorable-%') EXECUTE FUNCTION refuse_answer()`);
}
