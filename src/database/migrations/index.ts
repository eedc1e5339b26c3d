import { Foundation1763800000000 } from './1763800000000-foundation';
import { Portal1763800100000 } from './1763800100000-portal';
import { Webhooks1763800300000 } from './1763800300000-webhooks';
import { Dashboard1763800200000 } from './1763800200000-dashboard';
import { AccessRequestCatalogueIds1763800500000 } from './1763800500000-access-request-catalogue-ids';
import { OneJobPerDelivery1763800600000 } from './1763800600000-one-job-per-delivery';
import { OutboxTraceContext1763801100000 } from './1763801100000-outbox-trace-context';
import { WebhookSigningKeys1763801200000 } from './1763801200000-webhook-signing-keys';
import { WebhookFlowControl1763801300000 } from './1763801300000-webhook-flow-control';
import { DeliveryLogByEventTime1763801500000 } from './1763801500000-delivery-log-by-event-time';
import { PartitionedDeliveryLog1763801400000 } from './1763801400000-partitioned-delivery-log';
import { IdempotencyKeys1763801700000 } from './1763801700000-idempotency-keys';
import { WebhookDestinationsAndFilters1763801800000 } from './1763801800000-webhook-destinations-and-filters';
import { AccessRequestsUpdatedInPlace1763801900000 } from './1763801900000-access-requests-updated-in-place';
import { CredentialsKeyedByRequest1763802000000 } from './1763802000000-credentials-keyed-by-request';
import { DeliveryClaimsHeapOnly1763802100000 } from './1763802100000-delivery-claims-heap-only';
import { ReprojectRefSecuritySchemes1763802200000 } from './1763802200000-reproject-ref-security-schemes';
import { WebhookSubscriptionHistory1763802300000 } from './1763802300000-webhook-subscription-history';
import { DeploymentIdentity1763802400000 } from './1763802400000-deployment-identity';
import { DeliveryLogGaugeIndexes1763802500000 } from './1763802500000-delivery-log-gauge-indexes';
import { DeliveriesWaitingInOrder1763802600000 } from './1763802600000-deliveries-waiting-in-order';
import { WebhooksDeletedInTheBackground1763802700000 } from './1763802700000-webhooks-deleted-in-the-background';
import { DeliveryClaimTokens1763802800000 } from './1763802800000-delivery-claim-tokens';

/** Every migration, in order. Add new ones at the end (raw SQL up/down). */
export const MIGRATIONS = [
  Foundation1763800000000,
  Webhooks1763800300000,
  Portal1763800100000,
  Dashboard1763800200000,
  AccessRequestCatalogueIds1763800500000,
  OneJobPerDelivery1763800600000,
  OutboxTraceContext1763801100000,
  WebhookSigningKeys1763801200000,
  WebhookFlowControl1763801300000,
  PartitionedDeliveryLog1763801400000,
  DeliveryLogByEventTime1763801500000,
  IdempotencyKeys1763801700000,
  WebhookDestinationsAndFilters1763801800000,
  AccessRequestsUpdatedInPlace1763801900000,
  CredentialsKeyedByRequest1763802000000,
  DeliveryClaimsHeapOnly1763802100000,
  ReprojectRefSecuritySchemes1763802200000,
  WebhookSubscriptionHistory1763802300000,
  DeploymentIdentity1763802400000,
  DeliveryLogGaugeIndexes1763802500000,
  DeliveriesWaitingInOrder1763802600000,
  WebhooksDeletedInTheBackground1763802700000,
  DeliveryClaimTokens1763802800000,
];
