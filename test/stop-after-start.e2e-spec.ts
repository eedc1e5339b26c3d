import { startService } from './helpers/use-service';

/**
 * A stop right after a start, while BullMQ is still setting up its Redis connections: the stop waits for them
 * (briefly) rather than closing them mid-way, which made BullMQ emit an 'error' nobody handled (an unhandled
 * rejection: it ends a process, and failed whichever spec closed its service that early).
 */
describe('a stop right after a start', () => {
  it('closes cleanly, eight times over', async () => {
    for (let i = 0; i < 8; i++) {
      const t = await startService();
      await t.close();
    }
  }, 120_000);
});
