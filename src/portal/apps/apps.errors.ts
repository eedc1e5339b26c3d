import { ApiError } from '../../common/errors';

export enum AppErrorCode {
  NotFound = 'app_not_found',
}

/** Errors of the portal applications feature; the portal filter renders `{status:"error",errors:[...]}`. */
export class AppError extends ApiError {
  constructor(status: number, message: string, code: AppErrorCode) {
    super(status, message, code);
  }

  static notFound(): AppError {
    return new AppError(404, 'Application not found', AppErrorCode.NotFound);
  }
}
