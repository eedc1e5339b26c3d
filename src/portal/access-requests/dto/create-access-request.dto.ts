import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayNotEmpty, IsArray, IsBoolean, IsIn, IsInt, Matches, Max, Min } from 'class-validator';
import { IsOptionalNotNull } from '../../../common/http/optional-not-null.decorator';
import { IsRequiredText } from '../../../common/http/required-text.decorator';
import { AUTH_TYPES, AuthType } from '../access-request.entity';

/** Body of POST /portal-api/access_requests. */
export class CreateAccessRequestDto {
  @ApiProperty({ type: 'integer', example: 1, description: 'an existing application' })
  @IsInt()
  @Min(1)
  @Max(2_147_483_647)
  AppID: number;

  @ApiProperty({ example: 'Public catalogue' })
  @IsRequiredText(255)
  Catalogue: string;

  @ApiProperty({ example: 'Free plan' })
  @IsRequiredText(255)
  Plan: string;

  @ApiProperty({
    type: [String],
    example: ['weather-api', 'maps-api'],
    description: 'product names, without commas: the access-request routes show them joined by ", "',
  })
  @IsArray()
  @ArrayNotEmpty()
  @ArrayMaxSize(100)
  @IsRequiredText(255, { each: true })
  // the access-request routes show the names as one string joined by ", ": a comma in a name would make it ambiguous
  @Matches(/^[^,]*$/, {
    each: true,
    message: 'each value in Products must not contain a comma (the names are shown joined by ", ")',
  })
  Products: string[];

  @ApiPropertyOptional({
    type: 'integer',
    isArray: true,
    example: [4, 5],
    default: [],
    description: "ids of the portal's catalogue entries for the products; stored, returned and carried in events",
  })
  @IsOptionalNotNull()
  @IsArray()
  @ArrayMaxSize(100)
  @IsInt({ each: true })
  @Min(1, { each: true })
  @Max(2_147_483_647, { each: true })
  ProductIDs?: number[];

  @ApiPropertyOptional({
    type: 'integer',
    example: 2,
    default: 0,
    description: "id of the portal's catalogue entry for the plan; 0 for none",
  })
  @IsOptionalNotNull()
  @IsInt()
  @Min(0)
  @Max(2_147_483_647)
  PlanID?: number;

  @ApiProperty({ enum: AUTH_TYPES, example: 'authToken' })
  @IsIn(AUTH_TYPES)
  AuthType: AuthType;

  @ApiPropertyOptional({
    default: false,
    description: 'register the OAuth client at the identity provider (RFC 7591); needs AuthType oauth2.0',
  })
  @IsOptionalNotNull()
  @IsBoolean()
  DCREnabled?: boolean;

  @ApiPropertyOptional({ default: false, description: 'approve at once, issuing the credentials' })
  @IsOptionalNotNull()
  @IsBoolean()
  ProvisionImmediately?: boolean;

  @ApiProperty({ example: 'User#1', description: 'the user descriptor' })
  @IsRequiredText(255)
  User: string;
}
