import { validateSync } from 'class-validator';
import { codePointLength, MaxLength } from './max-length.decorator';

describe('MaxLength', () => {
  class Dto {
    @MaxLength(4) Name: unknown;
    @MaxLength(2, { each: true }) Items: unknown;
  }
  const messages = (values: Partial<Dto>) =>
    validateSync(Object.assign(new Dto(), { Name: 'n', Items: [], ...values })).flatMap((e) =>
      Object.values(e.constraints ?? {}),
    );

  it('counts code points, as the OpenAPI document and JSON Schema count a maxLength', () => {
    expect(['abcd', '😀😀', '\u2764\ufe0f', 'e\u0301', ''].map(codePointLength)).toEqual([4, 2, 2, 2, 0]);
    expect(messages({ Name: 'abcd' })).toEqual([]);
    expect(messages({ Name: '😀😀😀😀' })).toEqual([]);
    // a variation selector is a character of its own (class-validator's MaxLength took this as two)
    expect(messages({ Name: '\u2764\ufe0f\u2764\ufe0f\u2764\ufe0f' })).toEqual([
      'Name must be shorter than or equal to 4 characters',
    ]);
  });

  it("refuses what is not a string, and speaks of an array's items with each", () => {
    expect(messages({ Name: 5 })).toEqual(['Name must be shorter than or equal to 4 characters']);
    expect(messages({ Items: ['ab', 'abc'] })).toEqual([
      'each value in Items must be shorter than or equal to 2 characters',
    ]);
  });
});
