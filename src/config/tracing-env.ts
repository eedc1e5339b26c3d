import { config as loadDotenv } from 'dotenv';

/**
 * Whether OpenTelemetry tracing should start, read from the standard `OTEL_*` variables (and `.env`, as the
 * rest of the configuration). Kept apart from the validated configuration because it must be answered
 * before anything tracing instruments is loaded; the SDK then reads the remaining `OTEL_*` variables itself.
 *
 * Tracing is on when an exporter is named (`OTEL_TRACES_EXPORTER` other than `none`) or an OTLP endpoint is
 * given (`OTEL_EXPORTER_OTLP_ENDPOINT`, `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`), unless `OTEL_SDK_DISABLED` is
 * true. With none of them set nothing of the SDK is even loaded.
 */
export interface TracingSettings {
  enabled: boolean;
  /** The service name to report when neither OTEL_SERVICE_NAME nor OTEL_RESOURCE_ATTRIBUTES names one. */
  defaultServiceName?: string;
}

export const DEFAULT_SERVICE_NAME = 'gateway-management';

export function tracingSettings(env: NodeJS.ProcessEnv): TracingSettings {
  const set = (name: string) => (env[name] ?? '').trim() !== '';
  if ((env.OTEL_SDK_DISABLED ?? '').trim().toLowerCase() === 'true') return { enabled: false };
  const exporters = (env.OTEL_TRACES_EXPORTER ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  const enabled =
    exporters.length > 0
      ? exporters[0] !== 'none'
      : set('OTEL_EXPORTER_OTLP_ENDPOINT') || set('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
  if (!enabled) return { enabled };
  const named = set('OTEL_SERVICE_NAME') || /(^|,)\s*service\.name\s*=/.test(env.OTEL_RESOURCE_ATTRIBUTES ?? '');
  return { enabled, defaultServiceName: named ? undefined : DEFAULT_SERVICE_NAME };
}

/** tracingSettings of the process environment after reading `.env` (real environment variables win). */
export function tracingSettingsFromEnvironment(): TracingSettings {
  loadDotenv({ quiet: true });
  return tracingSettings(process.env);
}
