import { ApiProperty } from '@nestjs/swagger';

/** Success body of every API-definition write: the id, `status: ok`, the action and an empty `key_hash`. */
export class OasWriteResponseDto {
  @ApiProperty({ description: 'the API id', example: '4f3c2a1b0e9d8c7b6a5f4e3d2c1b0a99' })
  key: string;

  @ApiProperty({ example: 'ok' })
  status: string;

  @ApiProperty({ enum: ['added', 'modified', 'deleted'] })
  action: string;

  @ApiProperty({ description: 'always empty for API definitions', example: '' })
  key_hash: string;
}
