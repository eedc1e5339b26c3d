import { ValidationError, ValidationPipe } from '@nestjs/common';
import { ValidationFailed } from '../errors/api-error';

function flatten(errors: ValidationError[], parent = ''): string[] {
  const out: string[] = [];
  for (const e of errors) {
    const path = parent ? `${parent}.${e.property}` : e.property;
    if (e.constraints) {
      for (const msg of Object.values(e.constraints)) out.push(msg.startsWith(e.property) ? msg.replace(e.property, path) : `${path}: ${msg}`);
    }
    if (e.children?.length) out.push(...flatten(e.children, path));
  }
  return out;
}

/** The global pipe: whitelists DTO fields, converts types, and reports every reason at once. */
export function createValidationPipe(): ValidationPipe {
  return new ValidationPipe({
    transform: true,
    whitelist: true,
    forbidNonWhitelisted: false,
    validationError: { target: false, value: false },
    exceptionFactory: (errors) => new ValidationFailed(flatten(errors)),
  });
}
