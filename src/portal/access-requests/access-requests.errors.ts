import { ApiError } from '../../common/errors';

export enum AccessRequestErrorCode {
  NotFound = 'access_request_not_found',
  InvalidTransition = 'invalid_transition',
  DcrNotConfigured = 'dcr_not_configured',
  DcrFailed = 'dcr_failed',
}

/** Errors of the portal access-requests feature; the portal filter renders `{status:"error",errors:[...]}`. */
export class AccessRequestError extends ApiError {
  constructor(status: number, message: string, code: AccessRequestErrorCode) {
    super(status, message, code);
  }

  static notFound(): AccessRequestError {
    return new AccessRequestError(404, 'Access request not found', AccessRequestErrorCode.NotFound);
  }

  static invalidTransition(message: string): AccessRequestError {
    return new AccessRequestError(409, message, AccessRequestErrorCode.InvalidTransition);
  }

  /** DCREnabled but no identity provider configured: the approval cannot be carried out (502, like any IdP failure). */
  static dcrNotConfigured(): AccessRequestError {
    return new AccessRequestError(
      502,
      'dynamic client registration is not configured: set DCR_REGISTRATION_ENDPOINT to the identity provider registration endpoint',
      AccessRequestErrorCode.DcrNotConfigured,
    );
  }

  static dcrFailed(reason: string): AccessRequestError {
    return new AccessRequestError(
      502,
      `dynamic client registration failed: ${reason}`,
      AccessRequestErrorCode.DcrFailed,
    );
  }
}
