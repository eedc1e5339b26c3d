import { ApiError } from '../../common/errors';

export enum OasApiErrorCode {
  NotFound = 'api_not_found',
  MissingId = 'api_id_missing',
  Malformed = 'request_malformed',
  InvalidDocument = 'invalid_document',
  InvalidParameter = 'invalid_parameter',
  IdMismatch = 'api_id_mismatch',
  AlreadyExists = 'api_exists',
  ValidationBusy = 'validation_busy',
  TooLargeToStore = 'definition_too_large',
}

/** Errors of the gateway API-definition routes, rendered as `{"status":"error","message":"..."}`. */
export class OasApiError extends ApiError {
  constructor(status: number, messages: string | string[], code: OasApiErrorCode, headers?: Record<string, string>) {
    super(status, messages, code, headers);
  }

  static notFound(): OasApiError {
    return new OasApiError(404, 'API not found', OasApiErrorCode.NotFound);
  }

  /** A path whose apiID is blank names no API at all: the gateway's 400, not a 404 for an id that could exist. */
  static missingId(operation: 'update' | 'patch' | 'delete'): OasApiError {
    return new OasApiError(400, `Must specify an apiID to ${operation}`, OasApiErrorCode.MissingId);
  }

  static malformed(): OasApiError {
    return new OasApiError(400, 'request malformed', OasApiErrorCode.Malformed);
  }

  static invalidDocument(reasons: string[]): OasApiError {
    return new OasApiError(400, reasons, OasApiErrorCode.InvalidDocument);
  }

  static invalidParameters(reasons: string[]): OasApiError {
    return new OasApiError(400, reasons, OasApiErrorCode.InvalidParameter);
  }

  static idMismatch(): OasApiError {
    return new OasApiError(
      400,
      'the API ID in x-gateway-api-gateway.info.id does not match the path',
      OasApiErrorCode.IdMismatch,
    );
  }

  static alreadyExists(id: string): OasApiError {
    return new OasApiError(409, `an API with ID ${id} already exists`, OasApiErrorCode.AlreadyExists);
  }

  /** The definition as it would be stored (and read back) is larger than a request body may be. */
  static tooLargeToStore(bytes: number, limit: number): OasApiError {
    return new OasApiError(
      400,
      `the definition would be stored as ${bytes} bytes of JSON, more than the ${limit} bytes a request body may hold, ` +
        'so it could not be sent back as read',
      OasApiErrorCode.TooLargeToStore,
    );
  }

  /** Every validation thread stayed taken by other documents: not the document's fault, so a 503 to retry. */
  static validationBusy(retryAfterSeconds: number): OasApiError {
    return new OasApiError(
      503,
      `the service is busy validating other OpenAPI documents: send this one again in ${retryAfterSeconds} s`,
      OasApiErrorCode.ValidationBusy,
      { 'retry-after': String(retryAfterSeconds) },
    );
  }
}
