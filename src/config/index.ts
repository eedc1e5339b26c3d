import { config as loadDotenv } from 'dotenv';
import { AppConfig, loadConfig } from './app-config';

export * from './app-config';
export { ConfigModule } from './config.module';

/** Reads `.env` from the working directory (real environment variables win), then validates. */
export function loadConfigFromEnvironment(): AppConfig {
  loadDotenv({ quiet: true });
  return loadConfig(process.env);
}
