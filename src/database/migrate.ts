import { loadConfigFromEnvironment } from '../config';
import { runMigrations } from './data-source';
import { resolveInfrastructure } from './infrastructure';

/** `npm run migrate`: applies pending migrations to DATABASE_URL (or the embedded database). */
async function main(): Promise<void> {
  const config = loadConfigFromEnvironment();
  const infra = await resolveInfrastructure(config, (m) => console.log(m), { redis: false });
  const applied = await runMigrations(config.database.url!);
  console.log(applied.length ? `applied: ${applied.join(', ')}` : 'schema is up to date');
  await infra.embeddedPostgres?.stop();
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
