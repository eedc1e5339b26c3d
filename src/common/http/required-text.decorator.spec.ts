import { validateSync } from 'class-validator';
import { IsRequiredText, PRINTABLE_TEXT_PATTERN, printableTextRefusal } from './required-text.decorator';

describe('required text', () => {
  it('takes text with something visible in it, invisible characters inside included', () => {
    for (const v of ['a', 'My app', ' padded ', 'User#1', 'ümlaut', '名前', 'a\u200bb', '👩\u200d💻', 'می\u200cخواهم'])
      expect([v, printableTextRefusal(v)]).toEqual([v, null]);
  });

  it('refuses blank values: whitespace, zero-width and other invisible characters only', () => {
    for (const v of [
      '',
      ' ',
      '\u00a0',
      '\u3000',
      '\u200b',
      '\u200b\u200d',
      '\ufeff',
      '\u2800',
      '\u3164',
      ' \u200e ',
      '\u034f',
    ])
      expect([v, printableTextRefusal(v)]).toEqual([v, 'blank']);
  });

  it('refuses C0 and C1 control characters, DEL and the Unicode line and paragraph separators anywhere', () => {
    for (const v of [
      '\t',
      '\n',
      'a\u0007b',
      'a\tb',
      'line\r\nbreak',
      'a\u007f',
      '\u0085x',
      'x\u009f',
      'a\u2028b',
      'a\u2029b',
    ])
      expect([v, printableTextRefusal(v)]).toEqual([v, 'control']);
  });

  it('names the field, and for an array says what is wrong with it', () => {
    class Dto {
      @IsRequiredText(10) Name: unknown;
      @IsRequiredText(10, { each: true }) Products: unknown;
    }
    const messages = (values: Partial<Dto>) =>
      validateSync(Object.assign(new Dto(), { Name: 'n', Products: ['p'], ...values })).flatMap((e) =>
        Object.values(e.constraints ?? {}),
      );
    expect(messages({})).toEqual([]);
    expect(messages({ Name: '' })).toEqual(['Name should not be empty']);
    expect(messages({ Name: 'x'.repeat(11) })).toEqual(['Name must be shorter than or equal to 10 characters']);
    expect(messages({ Name: ' ' })).toEqual(['Name must not be blank (only whitespace or invisible characters)']);
    expect(messages({ Name: 'a\u0007b' })).toEqual([
      'Name must not contain control characters (line breaks, tabs, U+0000-U+001F, U+007F-U+009F, U+2028, U+2029)',
    ]);
    expect(messages({ Products: ['ok', 'a\nb'] })).toEqual([
      'each value in Products must not contain control characters (line breaks, tabs, U+0000-U+001F, U+007F-U+009F, U+2028, U+2029)',
    ]);
    expect(messages({ Products: ['ok', '\t '] })).toEqual([
      'each value in Products must not contain control characters (line breaks, tabs, U+0000-U+001F, U+007F-U+009F, U+2028, U+2029)',
    ]);
    expect(messages({ Products: ['ok', '\u200b'] })).toEqual([
      'each value in Products must not be blank (only whitespace or invisible characters)',
    ]);
  });

  it('is stated as a pattern that takes exactly the text it takes, read with or without the u flag', () => {
    const readings = [new RegExp(PRINTABLE_TEXT_PATTERN, 'u'), new RegExp(PRINTABLE_TEXT_PATTERN)];
    const wrong: string[] = [];
    const check = (text: string) => {
      const taken = text !== '' && printableTextRefusal(text) === null;
      for (const pattern of readings)
        if (pattern.test(text) !== taken) wrong.push(`${JSON.stringify(text)} (${pattern.flags || 'no flags'})`);
    };
    // every character of the BMP alone, after a visible one, and between invisible ones
    for (let c = 0; c < 0x10000; c++) {
      if (c >= 0xd800 && c <= 0xdfff) continue;
      const ch = String.fromCharCode(c);
      for (const text of [ch, `a${ch}`, ` ${ch}\u200b`]) check(text);
    }
    for (const text of ['', 'My app', '  padded  ', '👩\u200d💻', '😀', 'a\u200bb', '\u00a0\u3000', 'a\r\nb'])
      check(text);
    expect(wrong.slice(0, 10)).toEqual([]);
    // a pattern of \u escapes only: no flag or engine reads it differently
    expect(PRINTABLE_TEXT_PATTERN).toMatch(/^[\^[\]*$\\u0-9a-f-]+$/);
  });
});
