const OPTIONAL_BODY = Symbol('optional body');

/**
 * Marks a body DTO whose route may be called without any body (all its fields optional, defaults applied). Every
 * other body DTO's route needs one: the validation pipe refuses a missing body. A body that is sent must be a JSON
 * object either way (`null` included is refused).
 */
export const OptionalBody = (): ClassDecorator => (target) => {
  Reflect.defineMetadata(OPTIONAL_BODY, true, target);
};

export function isBodyOptional(dto: unknown): boolean {
  return typeof dto === 'function' && Reflect.getMetadata(OPTIONAL_BODY, dto) === true;
}
