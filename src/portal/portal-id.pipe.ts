import { PipeTransform } from '@nestjs/common';
import { ApiError } from '../common/errors';
import { isIntegerId } from '../common/http/ids';

/**
 * Parses a portal integer id from the path. Anything that is not a positive 32-bit integer cannot name
 * a row, so it is the same 404 as an unknown id (never a 500 from the database).
 */
export class PortalIdPipe implements PipeTransform<string, number> {
  constructor(private readonly notFound: () => ApiError) {}

  transform(value: string): number {
    if (!isIntegerId(value)) throw this.notFound();
    return Number(value);
  }
}
