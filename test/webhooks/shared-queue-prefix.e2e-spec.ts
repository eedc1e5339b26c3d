import { ServiceProcess } from '../helpers/service-process';
import { useTestEnv } from '../helpers/use-service';

const WARNING = /QUEUE_PREFIX (\{[^}]+\}) is shared with (\d+) other deployment\(s\) on other databases/;

/**
 * Two deployments (two databases) given one QUEUE_PREFIX take each other's jobs. Nothing is lost (a job for a
 * delivery the database does not hold is dropped, and its own reconciler queues it again), so only the log can tell:
 * every worker of each says so, counting the workers of its own deployment as one.
 */
describe('deployments given one QUEUE_PREFIX', () => {
  const a = useTestEnv({ LOG_LEVEL: 'warn', ROLE: 'worker' });
  const b = useTestEnv({ LOG_LEVEL: 'warn', ROLE: 'worker' });

  it("are told in each one's workers' log", async () => {
    const ofA = [a.adopt(await ServiceProcess.start(a.vars)), a.adopt(await ServiceProcess.start(a.vars))];
    // A's two workers have each looked once (a second after their start) and found only their own deployment
    await new Promise((r) => setTimeout(r, 2500));
    for (const p of ofA) expect(p.output).not.toMatch(WARNING);

    // adopted by A: B works in A's queue prefix, so it must be stopped before A drops that prefix (fixtures close in
    // the order they were declared), or its last writes leave keys behind
    const ofB = a.adopt(await ServiceProcess.start({ ...b.vars, QUEUE_PREFIX: a.queuePrefix }));
    const warned = async (p: ServiceProcess) => {
      for (let i = 0; i < 150 && !WARNING.test(p.output); i++) await new Promise((r) => setTimeout(r, 100));
      return WARNING.exec(p.output)?.slice(1);
    };
    // B at its first look; A's workers at their next (every 10 s)
    expect(await warned(ofB)).toEqual([`{${a.queuePrefix}}`, '1']);
    for (const p of ofA) expect(await warned(p)).toEqual([`{${a.queuePrefix}}`, '1']);
  }, 90_000);
});
