import { ValidateIf } from 'class-validator';

/** Like @IsOptional(), but only an absent field is skipped: an explicit null is validated (and refused). */
export const IsOptionalNotNull = () => ValidateIf((_object, value) => value !== undefined);
