import { isDeliveryJobData } from './delivery.queue';

const deliveryId = '7b0a3c1e-2f4d-4e5a-9b6c-1d2e3f4a5b6c';
const webhookId = '0f1e2d3c-4b5a-4968-8776-655443322110';

describe('delivery job data', () => {
  it('takes what the service queues: the delivery, its webhook, and its partition key or none', () => {
    expect(isDeliveryJobData({ deliveryId, webhookId, at: '2026-11-22T10:15:03.481000Z' })).toBe(true);
    expect(isDeliveryJobData({ deliveryId, webhookId })).toBe(true);
    expect(isDeliveryJobData({ deliveryId, webhookId, at: '2026-11-22T10:15:03.481000Z', trace: { a: 'b' } })).toBe(
      true,
    );
  });

  it('refuses a job added or edited by hand that names no delivery', () => {
    for (const data of [
      undefined,
      null,
      'text',
      {},
      { a: 1 },
      { deliveryId: 'own', webhookId },
      { deliveryId, webhookId: 'x' },
      { deliveryId },
      { deliveryId: 42, webhookId },
      { deliveryId, webhookId, at: 'yesterday' },
      { deliveryId, webhookId, at: '2026-13-45T10:15:03.481000Z' },
      { deliveryId, webhookId, at: 5 },
    ])
      expect(isDeliveryJobData(data)).toBe(false);
  });
});
