import { DelayedError } from 'bullmq';
import { DeliveryProcessor } from './delivery.processor';

describe('DeliveryProcessor.onFailed', () => {
  // the handler alone, with a logger to read (the processor's other collaborators play no part in it)
  const processor = () => {
    const logger = { warn: jest.fn(), error: jest.fn() };
    const p = Object.create(DeliveryProcessor.prototype) as DeliveryProcessor;
    Object.assign(p, { logger });
    return { p, logger };
  };

  it('logs a job that failed while Postgres was away as a warning, and any other failure as an error', () => {
    const { p, logger } = processor();
    const terminated = Object.assign(new Error('terminating connection due to administrator command'), {
      code: '57P01',
    });
    p.onFailed(undefined, terminated);
    p.onFailed(undefined, new Error('Connection terminated unexpectedly'));
    expect(logger.warn).toHaveBeenCalledTimes(2);
    expect(logger.warn.mock.calls[0][1]).toContain('the database was away');
    expect(logger.error).not.toHaveBeenCalled();

    p.onFailed(undefined, new TypeError("Cannot read properties of undefined (reading 'id')"));
    expect(logger.error).toHaveBeenCalledTimes(1);
    expect(logger.error.mock.calls[0][1]).toBe('delivery job failed; the reconciler will pick the delivery up again');
  });

  it('says nothing of a job moved back to wait (DelayedError)', () => {
    const { p, logger } = processor();
    p.onFailed(undefined, new DelayedError());
    expect(logger.warn).not.toHaveBeenCalled();
    expect(logger.error).not.toHaveBeenCalled();
  });
});
