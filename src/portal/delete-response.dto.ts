import { ApiProperty } from '@nestjs/swagger';

/** Body of a successful portal DELETE. */
export class PortalDeleteResponse {
  @ApiProperty({ example: 'ok' })
  status: 'ok';

  @ApiProperty({ example: 'Application deleted' })
  message: string;
}
