import { ApiError } from '../common/errors';
import { createValidationPipe } from '../common/http/validation.pipe';
import { ListApisQueryDto } from './apis/dto/list-apis-query.dto';
import { PageQueryDto } from './page-query.dto';

const pipe = createValidationPipe();

/** `p` as the global pipe hands it to a route of `dto` (undefined when absent), or the reasons it refuses it. */
async function page(dto: typeof PageQueryDto | typeof ListApisQueryDto, p: unknown): Promise<number | string[]> {
  try {
    const query = await pipe.transform(p === undefined ? {} : { p }, { type: 'query', metatype: dto });
    return query.p;
  } catch (err) {
    if (err instanceof ApiError) return err.messages;
    throw err;
  }
}

const WHOLE = 'p must be a whole page number in plain decimal digits (1, 2, ...)';
const WHOLE_OR_ALL = 'p must be a whole page number in plain decimal digits (1, 2, ..., or 0 or less for every API)';
const NOT_PLAIN = ['1e2', '1E2', '+1', ' 1', '1 ', '01', '-01', '-0', '1.0', '1.5', '0x1', '0b1', '', '-', 'abc', '١'];

describe('the dashboard page number p', () => {
  it.each([
    ['1', '1', 1],
    ['2', '2', 2],
    ['1000001', '1000001', 1_000_001],
    ['9007199254740991', '9007199254740991', Number.MAX_SAFE_INTEGER],
    // past any page a list can have: the largest safe integer, so the page is empty like any page past the end
    ['9007199254740993', '9007199254740993', Number.MAX_SAFE_INTEGER],
    ['99999999999999999999', '99999999999999999999', Number.MAX_SAFE_INTEGER],
    ['400 nines', '9'.repeat(400), Number.MAX_SAFE_INTEGER],
  ])('reads p=%s', async (_name, p, n) => {
    expect(await page(PageQueryDto, p)).toBe(n);
    expect(await page(ListApisQueryDto, p)).toBe(n);
  });

  it('is absent when not given', async () => {
    expect(await page(PageQueryDto, undefined)).toBeUndefined();
    expect(await page(ListApisQueryDto, undefined)).toBeUndefined();
  });

  it.each(NOT_PLAIN)('refuses p=%j, not plain decimal digits', async (p) => {
    expect(await page(PageQueryDto, p)).toEqual([WHOLE]);
    expect(await page(ListApisQueryDto, p)).toEqual([WHOLE_OR_ALL]);
  });

  it('refuses 0 and negative pages where a page is 1 or more', async () => {
    for (const p of ['0', '-1', '-99999999999999999999'])
      expect(await page(PageQueryDto, p)).toEqual(['p must be 1 or more']);
  });

  it('takes 0 or a negative page of the API list, however large, as every API', async () => {
    expect(await page(ListApisQueryDto, '0')).toBe(0);
    expect(await page(ListApisQueryDto, '-1')).toBe(-1);
    expect(await page(ListApisQueryDto, '-99999999999999999999')).toBe(-Number.MAX_SAFE_INTEGER);
    expect(await page(ListApisQueryDto, `-${'9'.repeat(400)}`)).toBe(-Number.MAX_SAFE_INTEGER);
  });
});
