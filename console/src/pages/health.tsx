import type { Webhook, WebhookStats } from '../types';
import { formatTime, plain, StatusBadge } from '../ui';

const REASONS: Record<string, string> = {
  gone: 'the subscriber answered 410 Gone',
  failing: 'every attempt failed for too long',
  manual: 'switched off by hand',
};

/** Active, or inactive with the reason and time the service gives. */
export function WebhookState({ webhook: w }: { webhook: Webhook }) {
  if (w.Active) return <StatusBadge status="active" />;
  return (
    <span class="state-cell" data-disabled-reason={w.DisabledReason ?? ''}>
      <StatusBadge status="inactive" />
      {w.DisabledReason ? (
        <small title={REASONS[w.DisabledReason] ?? w.DisabledReason}>
          {' '}
          {w.DisabledReason}
          {w.DisabledAt ? ` since ${formatTime(w.DisabledAt)}` : ''}
        </small>
      ) : null}
    </span>
  );
}

export function FlowControl({ webhook: w }: { webhook: Webhook }) {
  const parts = [w.RateLimit === null ? 'no rate limit' : `≤ ${w.RateLimit}/s`, w.Ordered ? 'ordered' : 'unordered'];
  return <span data-testid="flow">{parts.join(' · ')}</span>;
}

/** Success rate, what is still in flight, and the last error, as one line. */
export function HealthSummary({ stats: s, webhookId }: { stats: WebhookStats; webhookId: string }) {
  const finished = s.Delivered + s.Failed;
  const inFlight = s.Pending + s.Retrying;
  if (finished === 0 && inFlight === 0 && !s.LastFailure)
    return <span class="health muted">no deliveries in 24 h</span>;
  const rate = s.SuccessRate === null ? null : Math.round(s.SuccessRate * 100);
  return (
    <span class="health">
      {rate === null ? null : <span class={rate === 100 ? 'ok' : rate >= 80 ? 'warn' : 'bad'}>{rate}% delivered</span>}
      {s.Failed ? <span> · {s.Failed} failed</span> : null}
      {inFlight ? <span class="muted"> · {inFlight} in flight</span> : null}
      {s.LastFailure ? (
        <span class="muted">
          {' · last error '}
          <a
            href={`#/webhooks/${webhookId}`}
            title={`${formatTime(s.LastFailure.At)}: ${plain(s.LastFailure.ResponseBody.slice(0, 200))}`}
          >
            {s.LastFailure.Error}
            {s.LastFailure.StatusCode ? ` ${s.LastFailure.StatusCode}` : ''}
          </a>
        </span>
      ) : null}
    </span>
  );
}

/** The stats route's figures for the webhook's page. */
export function StatsPanel({ stats: s }: { stats: WebhookStats }) {
  const ms = (v: number | null) => (v === null ? '—' : `${v} ms`);
  return (
    <div class="stats" data-testid="stats">
      <dl class="stat-grid">
        <div>
          <dt>Success rate</dt>
          <dd>{s.SuccessRate === null ? '—' : `${Math.round(s.SuccessRate * 100)}%`}</dd>
        </div>
        <div>
          <dt>Delivered</dt>
          <dd>{s.Delivered}</dd>
        </div>
        <div>
          <dt>Failed</dt>
          <dd>{s.Failed}</dd>
        </div>
        <div>
          <dt>Pending / retrying</dt>
          <dd>
            {s.Pending} / {s.Retrying}
          </dd>
        </div>
        <div>
          <dt>Latency p50 / p95</dt>
          <dd>
            {ms(s.LatencyP50Ms)} / {ms(s.LatencyP95Ms)}
          </dd>
        </div>
        <div>
          <dt>Last success</dt>
          <dd>{formatTime(s.LastSuccessAt)}</dd>
        </div>
      </dl>
      {s.LastFailure ? (
        <p class="last-failure" data-testid="last-failure">
          Last failure {formatTime(s.LastFailure.At)}: <span class="bad">{s.LastFailure.Error}</span>
          {s.LastFailure.StatusCode ? ` (HTTP ${s.LastFailure.StatusCode})` : ''}
          {s.LastFailure.ResponseBody ? <pre>{plain(s.LastFailure.ResponseBody)}</pre> : null}
        </p>
      ) : null}
    </div>
  );
}
