import { useTestEnv } from '../helpers/use-service';

const { runSoak, formatReport } = require('./soak');

describe('fault soak (short)', () => {
  const env = useTestEnv();

  it('loses nothing while workers are killed, the queue is wiped, the API restarts and the receiver fails or hangs', async () => {
    const report = await runSoak({
      ...env, // its databaseUrl, redisUrl and queuePrefix
      // the load lasts one round of faults (every kind once, a second or so apart), at most loadMs
      oneRound: true,
      loadMs: 40_000,
      faultEveryMs: 1_000,
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
