import { applyDecorators } from '@nestjs/common';
import { IsNotEmpty, IsString, ValidateBy, ValidationOptions } from 'class-validator';
import { MaxLength } from './max-length.decorator';
import { bmpCharacterClass } from './pattern';

// Control characters: C0 (line breaks and tabs included), DEL and C1, and the Unicode line and paragraph
// separators. A name or a descriptor is one line of text.
const CONTROL = /[\p{Cc}\u2028\u2029]/u;
// What shows nothing: whitespace, format characters (zero-width spaces and joiners, bidi marks, BOM) and the
// letters that are drawn blank (Hangul fillers, the blank Braille pattern), and the combining grapheme joiner,
// which marks nothing by itself. Allowed inside a value (a joiner belongs in some names and emoji), but a value
// made only of them is as blank as "".
const INVISIBLE = /[\s\p{Cf}\u034f\u115f\u1160\u3164\uffa0\u2800]/gu;

/**
 * printableTextRefusal's rule as an OpenAPI `pattern` (ECMA-262, no flags, nothing but \u escapes, so validators in
 * any language read it alike): no control character, and at least one character that shows something. Built from the
 * same character sets, so the document cannot drift from the check; outside the BMP every character counts as
 * visible here (the few invisible ones there, such as tag characters, cannot be written in a pattern every validator
 * reads the same way).
 */
export const PRINTABLE_TEXT_PATTERN = (() => {
  const control = bmpCharacterClass(CONTROL);
  return `^[^${control}]*[^${control}${bmpCharacterClass(INVISIBLE)}][^${control}]*$`;
})();

/** Why `value` is not printable text, or null when it is (non-strings are left to @IsString()). */
export function printableTextRefusal(value: unknown): 'control' | 'blank' | null {
  if (typeof value !== 'string') return null;
  if (CONTROL.test(value)) return 'control';
  if (value.replace(INVISIBLE, '') === '') return 'blank';
  return null;
}

/** What is wrong with `field`'s text, as printableTextRefusal found it. */
export function printableTextMessage(field: string, refusal: 'control' | 'blank'): string {
  return refusal === 'control'
    ? `${field} must not contain control characters (line breaks, tabs, U+0000-U+001F, U+007F-U+009F, U+2028, U+2029)`
    : `${field} must not be blank (only whitespace or invisible characters)`;
}

function IsPrintableText(options: ValidationOptions): PropertyDecorator {
  const field = (property: string) => (options.each ? `each value in ${property}` : property);
  return ValidateBy(
    {
      name: 'isPrintableText',
      validator: {
        // "" is @IsNotEmpty()'s to refuse, with its own message
        validate: (value) => value === '' || printableTextRefusal(value) === null,
        defaultMessage: (args) => {
          // with `each` the value is the whole array: the message says what is wrong with its first wrong element
          const value: unknown = args?.value;
          const refusal = Array.isArray(value)
            ? value.map(printableTextRefusal).find((r) => r !== null)
            : printableTextRefusal(value);
          return printableTextMessage(field(args?.property ?? ''), refusal ?? 'blank');
        },
      },
    },
    options,
  );
}

/**
 * A required text field (a name, a catalogue, a user descriptor): a string of at most `max` characters, not empty,
 * not only whitespace or invisible characters (those may appear inside it), and without control characters. With
 * `each`, every element of an array. Messages name the field; `requiredMessage` replaces the one for "".
 */
export function IsRequiredText(
  max: number,
  opts: { each?: boolean; requiredMessage?: string } = {},
): PropertyDecorator {
  const each: ValidationOptions = opts.each ? { each: true } : {};
  // a field not given at all is told it is required, rather than that it must be a string
  const required = (property: string) => opts.requiredMessage ?? `${property} is required`;
  return applyDecorators(
    IsString(
      opts.each
        ? each
        : { message: (args) => (args.value == null ? required(args.property) : `${args.property} must be a string`) },
    ),
    IsNotEmpty(opts.requiredMessage ? { ...each, message: opts.requiredMessage } : each),
    IsPrintableText(each),
    MaxLength(max, each),
  );
}
