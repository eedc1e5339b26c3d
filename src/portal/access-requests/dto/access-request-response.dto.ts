import { ApiProperty } from '@nestjs/swagger';
import { ACCESS_REQUEST_STATUSES, AccessRequestStatus } from '../access-request-state';
import { AUTH_TYPES } from '../access-request.entity';
import { CredentialResponse } from './credential-response.dto';

const TIME = { example: '2025-11-22 10:30', description: '`YYYY-MM-DD HH:MM` (UTC)' };

/** Fields an access request has wherever it is shown. */
abstract class AccessRequestFields {
  @ApiProperty({ type: 'integer', example: 1 })
  ID: number;

  @ApiProperty({ type: 'integer', example: 1, description: 'the application (additive field)' })
  AppID: number;

  @ApiProperty({ example: 'Public catalogue' })
  Catalogue: string;

  @ApiProperty({ example: 'My app', description: "the application's name" })
  Client: string;

  @ApiProperty({ example: 'Free plan' })
  Plan: string;

  @ApiProperty({ example: 'User#1' })
  User: string;

  @ApiProperty({ enum: AUTH_TYPES, example: 'authToken' })
  AuthType: string;

  @ApiProperty()
  DCREnabled: boolean;

  @ApiProperty()
  ProvisionImmediately: boolean;

  @ApiProperty({ enum: ACCESS_REQUEST_STATUSES })
  Status: AccessRequestStatus;

  @ApiProperty({
    type: 'integer',
    isArray: true,
    example: [4, 5],
    description: 'catalogue ids of the products as given at creation; [] when none were (additive field)',
  })
  ProductIDs: number[];

  @ApiProperty({
    type: 'integer',
    example: 2,
    description: 'catalogue id of the plan as given at creation; 0 when none was (additive field)',
  })
  PlanID: number;

  @ApiProperty({ type: [CredentialResponse], description: 'the credentials in force (revoked ones are not shown)' })
  Credentials: CredentialResponse[];

  @ApiProperty(TIME)
  CreatedAt: string;

  @ApiProperty(TIME)
  UpdatedAt: string;

  @ApiProperty({
    example: '1970-01-01 00:00',
    description: 'always `1970-01-01 00:00`, the unset time (deleted requests are gone)',
  })
  DeletedAt: string;
}

/** An access request on the access-request routes: Products is one string, names joined by ", ". */
export class AccessRequestResponse extends AccessRequestFields {
  @ApiProperty({ example: 'weather-api, maps-api' })
  Products: string;
}

/** An access request nested in an application: Products is an array of names. */
export class NestedAccessRequestResponse extends AccessRequestFields {
  @ApiProperty({ type: [String], example: ['weather-api', 'maps-api'] })
  Products: string[];
}
