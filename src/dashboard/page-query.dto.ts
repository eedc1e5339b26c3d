import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsInt, IsOptional, ValidateBy } from 'class-validator';
import { ToPageNumber } from '../common/http/page-number';

/** What a `p` that is not plain decimal digits is told; `more` names the values beyond 1, 2, ... the route takes. */
export const notAPageNumber = (more = '') => `p must be a whole page number in plain decimal digits (1, 2, ...${more})`;

/** 1 or more, once `p` is a number: IsInt alone tells of anything else, so a reason is given once. */
const IsFirstPageOrLater = () =>
  ValidateBy({
    name: 'isFirstPageOrLater',
    validator: {
      validate: (value: unknown) => typeof value !== 'number' || value >= 1,
      defaultMessage: () => 'p must be 1 or more',
    },
  });

/** `p`: the 1-based page of a dashboard list. */
export class PageQueryDto {
  @ApiPropertyOptional({
    type: 'integer',
    description: 'page number, 1-based, in plain decimal digits; a page past the end is empty',
    minimum: 1,
    default: 1,
  })
  @IsOptional()
  @ToPageNumber()
  @IsInt({ message: notAPageNumber() })
  @IsFirstPageOrLater()
  p?: number;
}
