import { pageCount, pageWindow } from './paging';

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
});
