import { ApiProperty } from '@nestjs/swagger';

/**
 * A credential inside an access request. Every field is a string; "" when it does not apply (Expires: the unset time).
 */
export class CredentialResponse {
  @ApiProperty({ example: 'AccessRequest#1', description: 'the owning access request' })
  AccessRequest: string;

  @ApiProperty({ example: '<CREDENTIAL>', description: 'authToken: the issued key (secret)' })
  Credential: string;

  @ApiProperty({
    example: '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08',
    description: 'hex SHA-256 of Credential',
  })
  CredentialHash: string;

  @ApiProperty({ example: '<REGISTRATION_ACCESS_TOKEN>', description: 'DCR: registration access token (secret)' })
  DCRRegistrationAccessToken: string;

  @ApiProperty({
    example: 'https://idp.example.com/register/abc',
    description: 'DCR: address of the registered client',
  })
  DCRRegistrationClientURI: string;

  @ApiProperty({
    example: '{"client_id":"abc","client_secret":"<CLIENT_SECRET>"}',
    description: "DCR: the identity provider's registration reply, as JSON text",
  })
  DCRResponse: string;

  @ApiProperty({
    example: '1970-01-01 00:00',
    description:
      '`YYYY-MM-DD HH:MM` (UTC) when the client secret expires; `1970-01-01 00:00` (the unset time) for never',
  })
  Expires: string;

  @ApiProperty({ example: '3f1c0b...', description: 'oauth2.0: client id' })
  OAuthClientID: string;

  @ApiProperty({ example: '<CLIENT_SECRET>', description: 'oauth2.0: client secret (secret)' })
  OAuthClientSecret: string;

  @ApiProperty({ example: 'https://app.example.com/callback', description: "oauth2.0: the app's RedirectURLs" })
  RedirectURI: string;

  @ApiProperty({ example: 'code' })
  ResponseType: string;

  @ApiProperty({ example: 'weather-api' })
  Scope: string;

  @ApiProperty({ example: 'client_secret_basic', description: 'token endpoint authentication method' })
  TokenEndpoints: string;
}
