import { ApiProperty } from '@nestjs/swagger';

/** The gateway family's error body: `{"status": "error", "message": "..."}`. */
export class GatewayErrorBody {
  @ApiProperty({ enum: ['error'] })
  status: 'error';

  @ApiProperty({ example: 'Attempted administrative access with invalid or missing key!' })
  message: string;
}

/** The dashboard and admin families' error body: `{"Status": "Error", "Message": "...", "Meta": null}`. */
export class DashboardErrorBody {
  @ApiProperty({ enum: ['Error'] })
  Status: 'Error';

  @ApiProperty({ example: 'Not authorised' })
  Message: string;

  @ApiProperty({ type: 'string', nullable: true, enum: [null], description: 'always null' })
  Meta: null;
}

/** The portal family's error body: `{"status": "error", "errors": [...]}`, every reason in its own string. */
export class PortalErrorBody {
  @ApiProperty({ enum: ['error'] })
  status: 'error';

  @ApiProperty({ type: [String], example: ['Access request not found'] })
  errors: string[];
}

/** The error body of a route outside the four families (health, metrics): `{"statusCode": 400, "message": "..."}`. */
export class PlainErrorBody {
  @ApiProperty({ type: 'integer', example: 400 })
  statusCode: number;

  @ApiProperty({ example: 'x is given more than once' })
  message: string;
}
