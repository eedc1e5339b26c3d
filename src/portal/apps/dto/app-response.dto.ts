import { ApiExtraModels, ApiProperty, getSchemaPath } from '@nestjs/swagger';
import { VISIBILITIES, Visibility } from '../app.entity';
import { NestedAccessRequestResponse } from '../../access-requests/dto/access-request-response.dto';

/** An application, as every portal route shows it. */
@ApiExtraModels(NestedAccessRequestResponse)
export class AppResponse {
  @ApiProperty({ type: 'integer', example: 1 })
  ID: number;

  @ApiProperty({ example: 'My app' })
  Name: string;

  @ApiProperty({ example: 'Reads the weather' })
  Description: string;

  @ApiProperty({ example: 'https://app.example.com/callback' })
  RedirectURLs: string;

  @ApiProperty({ type: 'integer', example: 1 })
  UserID: number;

  @ApiProperty({ enum: VISIBILITIES })
  Visibility: Visibility;

  @ApiProperty({ example: '2025-11-22 10:30', description: '`YYYY-MM-DD HH:MM` (UTC)' })
  CreatedAt: string;

  @ApiProperty({
    description: '[] when the app has no access requests, otherwise one inner array holding all of them',
    type: 'array',
    items: { type: 'array', items: { $ref: getSchemaPath(NestedAccessRequestResponse) } },
  })
  AccessRequests: NestedAccessRequestResponse[][];
}
