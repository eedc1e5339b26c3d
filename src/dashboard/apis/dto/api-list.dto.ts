import { ApiProperty } from '@nestjs/swagger';

class AuthDto {
  @ApiProperty({ example: 'Authorization' }) auth_header_name: string;
}
class VersionDefinitionDto {
  @ApiProperty({ example: 'x-api-version' }) key: string;
  @ApiProperty({ example: 'header' }) location: string;
}
class ProxyDto {
  @ApiProperty({ example: '/pets/' }) listen_path: string;
  @ApiProperty() strip_listen_path: boolean;
  @ApiProperty({ example: 'http://upstream.example' }) target_url: string;
}
class VersionDataDto {
  @ApiProperty() not_versioned: boolean;
  @ApiProperty({
    type: 'object',
    description: 'version name → {name}',
    additionalProperties: { type: 'object', properties: { name: { type: 'string' } } },
  })
  versions: Record<string, { name: string }>;
}

/** `api_definition` of a list entry, as the gateway product lists it, plus the additive `active` and `use_keyless`. */
export class ApiDefinitionSummaryDto {
  @ApiProperty() api_id: string;
  @ApiProperty() name: string;
  @ApiProperty() org_id: string;
  @ApiProperty() active: boolean;
  @ApiProperty() use_keyless: boolean;
  @ApiProperty() use_oauth2: boolean;
  @ApiProperty({ type: AuthDto }) auth: AuthDto;
  @ApiProperty({ type: VersionDefinitionDto }) definition: VersionDefinitionDto;
  @ApiProperty({ type: ProxyDto }) proxy: ProxyDto;
  @ApiProperty({ type: VersionDataDto }) version_data: VersionDataDto;
}

export class ApiListEntryDto {
  @ApiProperty({ type: ApiDefinitionSummaryDto }) api_definition: ApiDefinitionSummaryDto;
}

export class ApiListResponseDto {
  @ApiProperty({ type: ApiListEntryDto, isArray: true }) apis: ApiListEntryDto[];
  @ApiProperty({ type: 'integer', description: 'ceil(total / page size); 0 when nothing matches' }) pages: number;
}
