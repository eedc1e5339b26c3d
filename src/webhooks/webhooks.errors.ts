import { ApiError } from '../common/errors';

export enum WebhookErrorCode {
  NotFound = 'webhook_not_found',
  HeaderNotFound = 'header_not_found',
  HeaderExists = 'header_exists',
  DeliveryNotFound = 'delivery_not_found',
  DeliveryPending = 'delivery_pending',
  WebhookInactive = 'webhook_inactive',
}

export class WebhookError extends ApiError {
  static notFound(): WebhookError {
    return new WebhookError(404, 'webhook not found', WebhookErrorCode.NotFound);
  }
  static headerNotFound(): WebhookError {
    return new WebhookError(404, 'header not found', WebhookErrorCode.HeaderNotFound);
  }
  static headerExists(name: string): WebhookError {
    return new WebhookError(
      409,
      `the webhook already has a header named ${name} (names are case-insensitive): change that one instead`,
      WebhookErrorCode.HeaderExists,
    );
  }
  static deliveryNotFound(): WebhookError {
    return new WebhookError(404, 'delivery not found', WebhookErrorCode.DeliveryNotFound);
  }
  static deliveryPending(): WebhookError {
    return new WebhookError(
      409,
      'delivery is still pending: it will be attempted on its schedule',
      WebhookErrorCode.DeliveryPending,
    );
  }
  static inactive(): WebhookError {
    return new WebhookError(
      409,
      'webhook is inactive: set Active to true with PUT first',
      WebhookErrorCode.WebhookInactive,
    );
  }
}
