import { validateSync } from 'class-validator';
import { MaxJsonBytes } from './max-json-bytes.decorator';

describe('MaxJsonBytes', () => {
  class Dto {
    @MaxJsonBytes(16) Model: unknown;
  }
  const messages = (Model: unknown) =>
    validateSync(Object.assign(new Dto(), { Model })).flatMap((e) => Object.values(e.constraints ?? {}));

  it('counts the bytes of the JSON text, in UTF-8', () => {
    // {"a":"1234567"} is 15 bytes; {"a":"12345678"} is 16
    expect(messages({ a: '1234567' })).toEqual([]);
    expect(messages({ a: '12345678' })).toEqual([]);
    expect(messages({ a: '123456789' })).toEqual(['Model must take at most 16 bytes as JSON']);
    // é is two bytes in UTF-8: {"a":"ééééé"} is 13 characters and 18 bytes
    expect(messages({ a: 'ééééé' })).toEqual(['Model must take at most 16 bytes as JSON']);
    expect(messages({})).toEqual([]);
  });

  it('refuses what has no JSON text', () => {
    expect(messages(() => 1)).toEqual(['Model must take at most 16 bytes as JSON']);
  });
});
