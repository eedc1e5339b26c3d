import { buildMessage, ValidateBy, ValidationOptions } from 'class-validator';

/**
 * A value whose JSON text takes at most `max` bytes of UTF-8, as the API answers it (Postgres's own text form of a
 * jsonb adds spaces): a free-form object the service keeps and returns in lists is bounded by what it says, not only
 * by the request body's limit.
 */
export function MaxJsonBytes(max: number, options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'maxJsonBytes',
      constraints: [max],
      validator: {
        validate: (value) => {
          const text = JSON.stringify(value);
          return text !== undefined && Buffer.byteLength(text, 'utf8') <= max;
        },
        defaultMessage: buildMessage(
          (each) => `${each}$property must take at most $constraint1 bytes as JSON`,
          options,
        ),
      },
    },
    options,
  );
}
