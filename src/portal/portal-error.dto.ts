import { ApiProperty } from '@nestjs/swagger';

/** The portal family's error body: `{status: "error", errors: [...]}`. */
export class PortalErrorBody {
  @ApiProperty({ example: 'error' })
  status: 'error';

  @ApiProperty({ type: [String], example: ['Access request not found'] })
  errors: string[];
}
