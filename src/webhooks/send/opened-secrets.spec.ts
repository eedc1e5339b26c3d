import { OpenedSecrets } from './opened-secrets';

describe('OpenedSecrets', () => {
  let now = 0;
  const clock = () => now;
  const opened: string[] = [];
  const open = (sealed: string) => {
    opened.push(sealed);
    return sealed.toUpperCase();
  };
  beforeEach(() => {
    now = 1_000;
    opened.length = 0;
  });

  it('opens a sealed secret once and answers from memory after', () => {
    const cache = new OpenedSecrets(open, { max: 10, ttlMs: 60_000 }, clock);
    expect(cache.get('a')).toBe('A');
    now += 59_000;
    expect(cache.get('a')).toBe('A');
    expect(opened).toEqual(['a']);
  });

  it('forgets an entry ttlMs after it was opened, used or not', () => {
    const cache = new OpenedSecrets(open, { max: 10, ttlMs: 60_000 }, clock);
    cache.get('a');
    now += 30_000;
    cache.get('b');
    now += 30_000;
    expect(cache.get('b')).toBe('B');
    expect(cache.size).toBe(1); // a is gone, b is not yet
    expect(cache.get('a')).toBe('A');
    expect(opened).toEqual(['a', 'b', 'a']);
  });

  it('holds at most max entries, dropping the oldest', () => {
    const cache = new OpenedSecrets(open, { max: 2, ttlMs: 60_000 }, clock);
    cache.get('a');
    cache.get('b');
    cache.get('c');
    expect(cache.size).toBe(2);
    cache.get('b');
    cache.get('a');
    expect(opened).toEqual(['a', 'b', 'c', 'a']);
  });

  it('does not keep what failed to open', () => {
    const cache = new OpenedSecrets<string>(
      () => {
        throw new Error('not a sealed secret');
      },
      { max: 2, ttlMs: 60_000 },
      clock,
    );
    expect(() => cache.get('x')).toThrow('not a sealed secret');
    expect(cache.size).toBe(0);
  });
});
