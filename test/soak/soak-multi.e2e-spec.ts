import { useTestEnv } from '../helpers/use-service';

const { runSoak, formatReport } = require('./soak');

describe('fault soak, many processes (short)', () => {
  const env = useTestEnv();

  it('two APIs and three workers lose nothing while a worker is frozen past its lease, Postgres connections are cut, an API restarts under load and a worker is killed', async () => {
    const report = await runSoak({
      ...env, // its databaseUrl, redisUrl and queuePrefix
      apis: 2,
      workers: 3,
      faults: ['freezeWorker', 'cutPostgres', 'restartApi', 'killWorker'],
      shuffle: false, // each of them within the short run
      // the load lasts one round of faults (each of them once, a second or so apart), at most loadMs
      oneRound: true,
      loadMs: 40_000,
      faultEveryMs: 1_000,
      drainMs: 60_000,
    });
    process.stderr.write(`\nshort soak, 2 API + 3 worker processes:\n${formatReport(report)}\n`);
    expect(report.eventsSent).toBeGreaterThan(20);
    expect(report.faults.workerFreezes).toBeGreaterThan(0);
    expect(report.faults.postgresCuts).toBeGreaterThan(0);
    expect(report.faults.apiRestarts).toBeGreaterThan(0);
    expect(report.lost).toBe(0);
    expect(report.pendingPastSchedule).toBe(0);
    expect(report.attemptsRecordedTwice).toBe(0);
    // the frozen worker's deliveries were taken over, and its answers, arriving late, were dropped
    expect(report.lateAnswersDropped).toBeGreaterThan(0);
    expect(report.received).toBeGreaterThanOrEqual(report.deliveriesExpected);
  }, 240_000);
});
