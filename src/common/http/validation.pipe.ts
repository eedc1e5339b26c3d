import { ArgumentMetadata, ValidationError, ValidationPipe } from '@nestjs/common';
import { ValidationFailed } from '../errors/api-error';

function flatten(errors: ValidationError[], parent = ''): string[] {
  const out: string[] = [];
  for (const e of errors) {
    const path = parent ? `${parent}.${e.property}` : e.property;
    if (e.constraints) {
      for (const msg of Object.values(e.constraints))
        out.push(msg.startsWith(e.property) ? msg.replace(e.property, path) : `${path}: ${msg}`);
    }
    if (e.children?.length) out.push(...flatten(e.children, path));
  }
  return out;
}

/**
 * Path parameters reach the route's own pipe exactly as sent. The stock pipe would turn a `number`
 * parameter into Number(value) first, and Number(' 1'), Number('1e0') and Number('0x1') are all 1, so
 * `/apps/%201` would name app 1: an id is exactly its digits, and only the id pipe decides that.
 */
class FamilyValidationPipe extends ValidationPipe {
  protected override transformPrimitive(value: unknown, metadata: ArgumentMetadata): unknown {
    if (metadata.type === 'param') return value;
    return super.transformPrimitive(value, metadata);
  }
}

/** The global pipe: whitelists DTO fields, converts types, and reports every reason at once. */
export function createValidationPipe(): ValidationPipe {
  return new FamilyValidationPipe({
    transform: true,
    whitelist: true,
    forbidNonWhitelisted: false,
    validationError: { target: false, value: false },
    exceptionFactory: (errors) => new ValidationFailed(flatten(errors)),
  });
}
