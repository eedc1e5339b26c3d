import { makeDirectory } from '../common/files/make-directory';

/** A setting that cannot work: its message names the variable, and the start says it in one line. */
export class ConfigError extends Error {}

/**
 * Makes `dir`, under DATA_DIR, for `what`; one that cannot be made is a ConfigError naming DATA_DIR and `orSet`, the
 * variable that does without it.
 */
export function makeDataDirectory(dir: string, what: string, orSet: string): void {
  try {
    makeDirectory(dir);
  } catch (err) {
    throw new ConfigError(
      `DATA_DIR: cannot make ${dir} for ${what} (${(err as Error).message}): set DATA_DIR to a writable directory, ` +
        `or set ${orSet}`,
    );
  }
}
