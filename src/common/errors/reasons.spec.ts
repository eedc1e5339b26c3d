import { firstReasons, MAX_REASONS } from './reasons';

describe('firstReasons', () => {
  const reasons = (n: number) => Array.from({ length: n }, (_, i) => `r${i}`);

  it('tells up to MAX_REASONS reasons as they are', () => {
    expect(MAX_REASONS).toBe(20);
    expect(firstReasons([])).toEqual([]);
    expect(firstReasons(reasons(20))).toEqual(reasons(20));
  });

  it('tells the first MAX_REASONS of more, then how many more', () => {
    expect(firstReasons(reasons(60000))).toEqual([...reasons(20), 'and 59980 more error(s)']);
  });

  it('counts reasons found but not listed', () => {
    expect(firstReasons(reasons(3), 7)).toEqual([...reasons(3), 'and 7 more error(s)']);
    expect(firstReasons(reasons(25), 5)).toEqual([...reasons(20), 'and 10 more error(s)']);
  });
});
