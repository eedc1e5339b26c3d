import { DEFAULT_SERVICE_NAME, tracingSettings } from './tracing-env';

describe('tracingSettings', () => {
  it('is off when no OTEL_ variable asks for traces', () => {
    expect(tracingSettings({})).toEqual({ enabled: false });
    expect(tracingSettings({ OTEL_SERVICE_NAME: 'x', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' })).toEqual({
      enabled: false,
    });
  });

  it('is on when an OTLP endpoint is given, with a default service name', () => {
    expect(tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toEqual({
      enabled: true,
      defaultServiceName: DEFAULT_SERVICE_NAME,
    });
    expect(tracingSettings({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' }).enabled).toBe(
      true,
    );
  });

  it('is on when an exporter is named, and off for none', () => {
    expect(tracingSettings({ OTEL_TRACES_EXPORTER: 'console' }).enabled).toBe(true);
    expect(tracingSettings({ OTEL_TRACES_EXPORTER: 'otlp,console' }).enabled).toBe(true);
    expect(
      tracingSettings({ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }).enabled,
    ).toBe(false);
  });

  it('stays off when the SDK is disabled', () => {
    expect(tracingSettings({ OTEL_SDK_DISABLED: 'true', OTEL_TRACES_EXPORTER: 'otlp' }).enabled).toBe(false);
    expect(tracingSettings({ OTEL_SDK_DISABLED: 'false', OTEL_TRACES_EXPORTER: 'otlp' }).enabled).toBe(true);
  });

  it('leaves the service name to OTEL_SERVICE_NAME or OTEL_RESOURCE_ATTRIBUTES when they give one', () => {
    expect(
      tracingSettings({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_SERVICE_NAME: 'gw-api' }).defaultServiceName,
    ).toBeUndefined();
    expect(
      tracingSettings({
        OTEL_TRACES_EXPORTER: 'otlp',
        OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment=prod, service.name=gw',
      }).defaultServiceName,
    ).toBeUndefined();
    expect(
      tracingSettings({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment=prod' })
        .defaultServiceName,
    ).toBe(DEFAULT_SERVICE_NAME);
  });
});
