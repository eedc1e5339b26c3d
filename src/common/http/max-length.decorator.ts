import { buildMessage, ValidateBy, ValidationOptions } from 'class-validator';

/** The number of Unicode code points in `value`: a surrogate pair is one, as JSON Schema's maxLength counts. */
export function codePointLength(value: string): number {
  let n = value.length;
  for (let i = 0; i < value.length - 1; i++) {
    const c = value.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = value.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n--;
        i++;
      }
    }
  }
  return n;
}

/**
 * A string of at most `max` characters, counted as the OpenAPI document's maxLength counts them (code points), with
 * class-validator's message. class-validator's own MaxLength does not count a variation selector after a character
 * (U+FE0F in ❤️), so it took names twice as long as the document and the README allow.
 */
export function MaxLength(max: number, options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      // the rule's name, and its constraint, say maxLength to the OpenAPI document as class-validator's did
      name: 'maxLength',
      constraints: [max],
      validator: {
        validate: (value) => typeof value === 'string' && codePointLength(value) <= max,
        defaultMessage: buildMessage(
          (each) => `${each}$property must be shorter than or equal to $constraint1 characters`,
          options,
        ),
      },
    },
    options,
  );
}
