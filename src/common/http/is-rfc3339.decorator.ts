import { ValidateBy, ValidationOptions } from 'class-validator';
import { notRfc3339Message, parseRfc3339 } from './time';

/**
 * The field is an RFC 3339 date-time (see parseRfc3339): a date alone, or a time without seconds or without
 * an offset, is refused rather than read in the server's time zone. The message names the field.
 */
export function IsRfc3339(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isRfc3339',
      validator: {
        validate: (value) => parseRfc3339(value) !== undefined,
        defaultMessage: (args) => notRfc3339Message(args?.property ?? 'value'),
      },
    },
    options,
  );
}
