import { pageCount, pageWindow, pageWindowOrAll } from './paging';

describe('dashboard paging', () => {
  it.each([
    [0, 0],
    [1, 1],
    [10, 1],
    [11, 2],
    [20, 2],
    [21, 3],
  ])('%i items in pages of 10 make %i pages', (total, pages) => expect(pageCount(total, 10)).toBe(pages));

  it('starts at page 1, also when p is absent', () => {
    expect(pageWindow(undefined, 10)).toEqual({ offset: 0, limit: 10 });
    expect(pageWindow(1, 10)).toEqual({ offset: 0, limit: 10 });
    expect(pageWindow(3, 25)).toEqual({ offset: 50, limit: 25 });
  });

  it('holds the offset of a page past any list to the largest safe integer, which PostgreSQL takes', () => {
    expect(pageWindow(Number.MAX_SAFE_INTEGER, 10)).toEqual({ offset: Number.MAX_SAFE_INTEGER, limit: 10 });
    expect(pageWindow(9_007_199_254_742, 1000)).toEqual({ offset: Number.MAX_SAFE_INTEGER, limit: 1000 });
    expect(pageWindowOrAll(Number.MAX_SAFE_INTEGER, 10)).toEqual({ offset: Number.MAX_SAFE_INTEGER, limit: 10 });
  });

  it('takes a p of 0 or less as every item, and other pages as usual', () => {
    expect(pageWindowOrAll(0, 10)).toEqual({ offset: 0, limit: null });
    expect(pageWindowOrAll(-1, 10)).toEqual({ offset: 0, limit: null });
    expect(pageWindowOrAll(-99, 10)).toEqual({ offset: 0, limit: null });
    expect(pageWindowOrAll(undefined, 10)).toEqual({ offset: 0, limit: 10 });
    expect(pageWindowOrAll(2, 10)).toEqual({ offset: 10, limit: 10 });
  });
});
