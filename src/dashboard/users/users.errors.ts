import { ApiError, firstReasons, ValidationFailed } from '../../common/errors';

/** What a refusal of a user body starts with, whichever check refuses it. */
export const USER_VALIDATION_FAILED = 'User object validation failed.';

export const EMAIL_TAKEN = {
  dashboard: 'User email already exists for this org.',
  admin: 'User email already exists for this Org',
};

export enum UserErrorCode {
  NotFound = 'user_not_found',
  EmailTaken = 'user_email_taken',
  CannotGrant = 'user_cannot_grant',
}

/** Errors of the user routes, rendered in the dashboard body `{"Status":"Error","Message":"...","Meta":null}`. */
export class UserError extends ApiError {
  constructor(status: number, message: string, code: UserErrorCode) {
    super(status, message, code);
  }

  /** 400 `User object validation failed.` plus the reasons (at most 20 told): a validation failure like any other. */
  static invalid(reasons: string[]): ValidationFailed {
    return new ValidationFailed([`${USER_VALIDATION_FAILED} ${firstReasons(reasons).join('; ')}`]);
  }

  static notFound(): UserError {
    return new UserError(404, 'User not found', UserErrorCode.NotFound);
  }

  /** Each API in its own documented wording: the admin API's is `... for this Org`, without the full stop. */
  static emailTaken(api: 'dashboard' | 'admin'): UserError {
    return new UserError(409, EMAIL_TAKEN[api], UserErrorCode.EmailTaken);
  }

  static cannotGrant(what: string[]): UserError {
    return new UserError(
      403,
      `access denied: You cannot grant or remove permissions you do not hold (${what.join(', ')})`,
      UserErrorCode.CannotGrant,
    );
  }
}
