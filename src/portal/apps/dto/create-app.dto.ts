import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsInt, IsString, Max, Min } from 'class-validator';
import { MaxLength } from '../../../common/http/max-length.decorator';
import { IsOptionalNotNull } from '../../../common/http/optional-not-null.decorator';
import { IsRequiredText } from '../../../common/http/required-text.decorator';
import { Visibility, VISIBILITIES } from '../app.entity';
import { IsRedirectUrlList, REDIRECT_URLS_DESCRIPTION } from './redirect-urls.validator';

/** Body of POST /portal-api/apps. */
export class CreateAppDto {
  @ApiProperty({ example: 'My app', maxLength: 255 })
  @IsRequiredText(255)
  Name: string;

  @ApiPropertyOptional({ example: 'Reads the weather', default: '', maxLength: 4096 })
  @IsOptionalNotNull()
  @IsString()
  @MaxLength(4096)
  Description?: string;

  @ApiPropertyOptional({
    description: REDIRECT_URLS_DESCRIPTION,
    example: 'https://app.example.com/callback',
    default: '',
  })
  @IsOptionalNotNull()
  @IsString()
  @MaxLength(4096)
  @IsRedirectUrlList()
  RedirectURLs?: string;

  @ApiPropertyOptional({ type: 'integer', example: 1, default: 0, minimum: 0 })
  @IsOptionalNotNull()
  @IsInt()
  @Min(0)
  @Max(2_147_483_647)
  UserID?: number;

  @ApiPropertyOptional({ enum: VISIBILITIES, default: 'organisation' })
  @IsOptionalNotNull()
  @IsIn(VISIBILITIES)
  Visibility?: Visibility;
}
