// The formatter's error tree (the step that orders and merges Ajv's errors before each is printed); it ships no types.
declare module '@readme/better-ajv-errors/lib/helpers' {
  import type { ErrorObject } from 'ajv';

  /** One error to print; `options` is the Ajv error it prints (merged, for several `enum` errors at one place). */
  interface ValidationErrorInstance {
    options: ErrorObject;
  }

  export default function prettify(errors: ErrorObject[], options: { colorize: boolean }): ValidationErrorInstance[];
}
