import { parseOutboxNotification } from './outbox.store';

describe('outbox notifications', () => {
  const a = '0b6f7c1e-5d4f-4c1a-9a57-2f1f4e1f0a11';
  const b = '9d3c2b1a-0000-4000-8000-123456789abc';

  it('announce the ids of the events their transaction wrote, and the range of their times', () => {
    expect(parseOutboxNotification(`${a}@1700000000000-1700000000001`)).toEqual({
      ids: [a],
      from: new Date(1700000000000),
      to: new Date(1700000000001),
    });
    expect(parseOutboxNotification(`${a},${b}`)).toEqual({ ids: [a, b], from: null, to: null });
  });

  it('say nothing (the listener looks for itself) when empty or not a list of ids', () => {
    expect(parseOutboxNotification('')).toBeNull();
    expect(parseOutboxNotification(undefined)).toBeNull();
    expect(parseOutboxNotification(`${a},not-an-id`)).toBeNull();
    expect(parseOutboxNotification(`${a};drop table`)).toBeNull();
    expect(parseOutboxNotification(`${a}@soon`)).toBeNull();
    expect(parseOutboxNotification(`${a}@1-2@3-4`)).toBeNull();
  });
});
