import { parseOutboxNotification } from './events.service';

describe('outbox notifications', () => {
  const a = '0b6f7c1e-5d4f-4c1a-9a57-2f1f4e1f0a11';
  const b = '9d3c2b1a-0000-4000-8000-123456789abc';

  it('announce the ids of the events their transaction wrote', () => {
    expect(parseOutboxNotification(a)).toEqual([a]);
    expect(parseOutboxNotification(`${a},${b}`)).toEqual([a, b]);
  });

  it('say nothing (the listener looks for itself) when empty or not a list of ids', () => {
    expect(parseOutboxNotification('')).toBeNull();
    expect(parseOutboxNotification(undefined)).toBeNull();
    expect(parseOutboxNotification(`${a},not-an-id`)).toBeNull();
    expect(parseOutboxNotification(`${a};drop table`)).toBeNull();
  });
});
