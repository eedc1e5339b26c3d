import { useTestEnv } from '../helpers/use-service';

const { runSoak, formatReport } = require('./soak');

describe('fault soak (short)', () => {
  const env = useTestEnv();

  it('loses nothing while workers are killed, the queue is wiped, the API restarts and the receiver fails or hangs', async () => {
    const report = await runSoak({
      ...env, // its databaseUrl, redisUrl and queuePrefix
      loadMs: 25_000,
      faultEveryMs: 2_500,
      drainMs: 60_000,
    });
    process.stderr.write(`\nshort soak:\n${formatReport(report)}\n`);
    expect(report.eventsSent).toBeGreaterThan(20);
    expect(report.faults.workerKills + report.faults.queueWipes + report.faults.apiRestarts).toBeGreaterThan(0);
    expect(report.lost).toBe(0);
    expect(report.pendingPastSchedule).toBe(0);
    expect(report.received).toBeGreaterThanOrEqual(report.deliveriesExpected);
  }, 180_000);
});
