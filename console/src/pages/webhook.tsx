import { useState } from 'preact/hooks';
import { api, query } from '../api';
import { navigate } from '../router';
import {
  DELIVERY_STATUSES,
  type Delivery,
  type RecoverResult,
  type Webhook,
  type WebhookSecret,
  type WebhookStats,
  type WebhookTestResult,
} from '../types';
import { Target } from './destination';
import { FlowControl, StatsPanel, WebhookState } from './health';
import {
  AutoRefresh,
  Empty,
  ErrorBox,
  formatTime,
  type Loadable,
  Loading,
  Pager,
  plain,
  StatusBadge,
  useAction,
  useInterval,
  useLoad,
} from '../ui';

const PER_PAGE = 20;

export function WebhookPage({ id }: { id: string }) {
  const path = `/portal-api/webhooks/${encodeURIComponent(id)}`;
  const hook = useLoad(() => api.get<Webhook>(path), [id]);
  const [deliveriesVersion, setDeliveriesVersion] = useState(0);
  const stats = useLoad(() => api.get<WebhookStats>(`${path}/stats`), [id, deliveriesVersion]);

  if (hook.error) return <ErrorBox error={hook.error} onRetry={hook.reload} />;
  if (!hook.data) return <Loading what="the webhook" />;
  const w = hook.data;
  return (
    <section>
      <nav aria-label="breadcrumb">
        <ul>
          <li>
            <a href="#/webhooks">Webhooks</a>
          </li>
          <li>{plain(w.Name)}</li>
        </ul>
      </nav>
      <div class="title-row">
        <h2>{plain(w.Name)}</h2>
        <div class="toolbar">
          <ActiveToggle path={path} active={w.Active} onDone={hook.reload} />
          <a href={`#/webhooks/${w.ID}/edit`} role="button" class="secondary">
            Edit
          </a>
        </div>
      </div>
      <article class="grid-2">
        <dl>
          <dt>Target</dt>
          <dd class="wrap">
            <Target webhook={w} />
          </dd>
          <dt>State</dt>
          <dd>
            <WebhookState webhook={w} />
          </dd>
          <dt>Timeout</dt>
          <dd>{w.Timeout} s</dd>
          <dt>Flow control</dt>
          <dd>
            <FlowControl webhook={w} />
          </dd>
        </dl>
        <dl>
          <dt>Events</dt>
          <dd>{w.Events.join(', ')}</dd>
          <dt>Headers</dt>
          <dd>{w.Headers.length ? w.Headers.map((h) => h.Name).join(', ') : <span class="muted">none</span>}</dd>
          <dt>Filter</dt>
          <dd data-testid="filter">
            {w.Filter ? <pre>{JSON.stringify(w.Filter, null, 2)}</pre> : <span class="muted">none: every event</span>}
          </dd>
          <dt>Created</dt>
          <dd>{formatTime(w.CreatedAt)}</dd>
        </dl>
      </article>
      <Health stats={stats} />
      <SecretPanel path={path} scheme={w.SignatureScheme} />
      <TestSend path={path} webhookId={w.ID} onSent={() => setDeliveriesVersion((v) => v + 1)} />
      <Deliveries key={deliveriesVersion} webhook={w} onRefresh={stats.reload} />
      <DangerZone path={path} name={w.Name} />
    </section>
  );
}

/** The webhook's health over the last 24 hours (stats route). */
function Health({ stats }: { stats: Loadable<WebhookStats> }) {
  return (
    <article>
      <header class="title-row">
        <strong>Health, last 24 hours</strong>
        <button
          type="button"
          class="secondary outline small"
          aria-busy={stats.loading ? 'true' : undefined}
          onClick={stats.reload}
        >
          Refresh health
        </button>
      </header>
      {stats.error ? <ErrorBox error={stats.error} onRetry={stats.reload} /> : null}
      {!stats.data && !stats.error ? <Loading what="health" /> : null}
      {stats.data ? <StatsPanel stats={stats.data} /> : null}
    </article>
  );
}

/** Switches deliveries off or back on (PUT Active); a webhook switched on again gets new events only. */
function ActiveToggle({ path, active, onDone }: { path: string; active: boolean; onDone: () => void }) {
  const action = useAction();
  return (
    <>
      <button
        type="button"
        class="secondary outline"
        aria-busy={action.busy ? 'true' : undefined}
        disabled={action.busy}
        onClick={() =>
          action.run(async () => {
            await api.put(path, { Active: !active });
            onDone();
          })
        }
      >
        {active ? 'Deactivate' : 'Activate'}
      </button>
      {action.error ? <ErrorBox error={action.error} /> : null}
    </>
  );
}

/** The key receivers verify with: revealed on demand, rotated with an overlap. */
function SecretPanel({ path, scheme }: { path: string; scheme: string }) {
  const [secret, setSecret] = useState<WebhookSecret | undefined>(undefined);
  const [grace, setGrace] = useState('86400');
  const reveal = useAction();
  const rotate = useAction();
  return (
    <article>
      <header class="title-row">
        <strong>Signing key</strong>
        <small class="muted">
          scheme <code data-testid="scheme">{scheme}</code>
        </small>
      </header>
      <p class="secret-row">
        <code data-testid="secret">{secret?.Secret ?? '•'.repeat(24)}</code>
        {secret ? (
          <button type="button" class="secondary outline small" onClick={() => setSecret(undefined)}>
            Hide
          </button>
        ) : (
          <button
            type="button"
            class="secondary outline small"
            aria-busy={reveal.busy ? 'true' : undefined}
            onClick={() => reveal.run(async () => setSecret(await api.get<WebhookSecret>(`${path}/secret`)))}
          >
            Reveal secret
          </button>
        )}
      </p>
      {secret?.PreviousSecretExpiresAt ? (
        <p role="status" data-testid="previous-key">
          The previous key also signs deliveries until {formatTime(secret.PreviousSecretExpiresAt)}.
        </p>
      ) : null}
      {reveal.error ? <ErrorBox error={reveal.error} /> : null}
      <form
        class="rotate"
        onSubmit={(e) => {
          e.preventDefault();
          void rotate.run(async () => {
            const body = grace.trim() === '' ? {} : { GracePeriodSeconds: Number(grace) };
            setSecret(await api.post<WebhookSecret>(`${path}/secret/rotate`, body));
          });
        }}
      >
        <label>
          Rotate: keep the old key signing too for (seconds; 0 retires it at once)
          <div role="group">
            <input
              name="GracePeriodSeconds"
              type="number"
              min={0}
              max={604800}
              value={grace}
              onInput={(e) => setGrace((e.target as HTMLInputElement).value)}
            />
            <button type="submit" class="secondary" aria-busy={rotate.busy ? 'true' : undefined} disabled={rotate.busy}>
              Rotate secret
            </button>
          </div>
        </label>
        {rotate.error ? <ErrorBox error={rotate.error} /> : null}
      </form>
      <small class="muted">Receivers verify each delivery's webhook-signature with it (Standard Webhooks).</small>
    </article>
  );
}

/** Queues one signed WebhookTest delivery to this webhook alone. */
function TestSend({ path, webhookId, onSent }: { path: string; webhookId: string; onSent: () => void }) {
  const [note, setNote] = useState('');
  const [sent, setSent] = useState<WebhookTestResult | undefined>(undefined);
  const action = useAction();
  return (
    <article>
      <header>
        <strong>Send a test event</strong>
      </header>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          setSent(undefined);
          void action.run(async () => {
            setSent(await api.post<WebhookTestResult>(`${path}/test`, note ? { Note: note } : {}));
            onSent();
          });
        }}
      >
        <div role="group">
          <input
            name="Note"
            aria-label="Note carried in the test event"
            placeholder="Note (optional), e.g. checking the new endpoint"
            maxLength={1024}
            value={note}
            onInput={(e) => setNote((e.target as HTMLInputElement).value)}
          />
          <button type="submit" aria-busy={action.busy ? 'true' : undefined} disabled={action.busy}>
            Send test event
          </button>
        </div>
      </form>
      {sent ? (
        <p role="status">
          Test delivery queued.{' '}
          <a href={`#/webhooks/${webhookId}/deliveries/${sent.DeliveryID}`}>Open the test delivery</a>
        </p>
      ) : null}
      {action.error ? <ErrorBox error={action.error} /> : null}
    </article>
  );
}

/** The delivery log; refreshing it refreshes the health figures too (`onRefresh`). */
function Deliveries({ webhook, onRefresh }: { webhook: Webhook; onRefresh: () => void }) {
  const [page, setPage] = useState(1);
  const [status, setStatus] = useState('');
  const path = `/portal-api/webhooks/${encodeURIComponent(webhook.ID)}`;
  const list = useLoad(
    () => api.get<Delivery[]>(`${path}/deliveries${query({ page, per_page: PER_PAGE, status })}`),
    [webhook.ID, page, status],
  );
  const [auto, setAuto] = useState(false);
  useInterval(
    () => {
      list.reload();
      onRefresh();
    },
    5000,
    auto,
  );
  return (
    <article>
      <header class="title-row">
        <strong>Deliveries</strong>
        <div class="toolbar">
          <AutoRefresh on={auto} onChange={setAuto} />
          <select
            aria-label="Filter by status"
            name="status"
            value={status}
            onChange={(e) => {
              setStatus((e.target as HTMLSelectElement).value);
              setPage(1);
            }}
          >
            <option value="">every status</option>
            {DELIVERY_STATUSES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
          <button
            type="button"
            class="secondary outline"
            aria-busy={list.loading ? 'true' : undefined}
            onClick={() => {
              list.reload();
              onRefresh();
            }}
          >
            Refresh
          </button>
        </div>
      </header>
      {list.error ? <ErrorBox error={list.error} onRetry={list.reload} /> : null}
      {list.loading && !list.data ? <Loading what="deliveries" /> : null}
      {list.data && list.data.length === 0 ? (
        <Empty>
          {status
            ? `No ${status} deliveries${page > 1 ? ' on this page' : ''}.`
            : 'No deliveries yet: events the webhook subscribes to will appear here.'}
        </Empty>
      ) : null}
      {list.data && list.data.length > 0 ? (
        <div class="overflow-auto">
          <table class="striped stack" data-testid="deliveries">
            <thead>
              <tr>
                <th>Created</th>
                <th>Event</th>
                <th>Status</th>
                <th>Attempts</th>
                <th>Next attempt</th>
              </tr>
            </thead>
            <tbody>
              {list.data.map((d) => (
                <tr key={d.ID} data-delivery={d.ID} data-status={d.Status}>
                  <td data-label="Created">
                    <a href={`#/webhooks/${webhook.ID}/deliveries/${d.ID}`}>{formatTime(d.CreatedAt)}</a>
                  </td>
                  <td data-label="Event">{d.Event}</td>
                  <td data-label="Status">
                    <StatusBadge status={d.Status} />
                  </td>
                  <td data-label="Attempts">{d.AttemptCount}</td>
                  <td data-label="Next attempt">{formatTime(d.NextAttemptAt)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      {list.data ? <Pager page={page} count={list.data.length} perPage={PER_PAGE} onPage={setPage} /> : null}
      <Recover
        path={path}
        onDone={() => {
          list.reload();
          onRefresh();
        }}
      />
    </article>
  );
}

/** Re-queues every failed delivery created since a time. */
function Recover({ path, onDone }: { path: string; onDone: () => void }) {
  // typed as the console shows times (a date-time picker would show the browser's locale and time zone)
  const [since, setSince] = useState(() => formatTime(new Date(Date.now() - 24 * 3600_000).toISOString()));
  const [result, setResult] = useState<number | undefined>(undefined);
  const action = useAction();
  return (
    <form
      class="recover"
      onSubmit={(e) => {
        e.preventDefault();
        setResult(undefined);
        // sent as typed: the service says what is wrong with a time it cannot take
        void action.run(async () => {
          const r = await api.post<RecoverResult>(`${path}/recover`, { since: since.trim() });
          setResult(r.Requeued);
          onDone();
        });
      }}
    >
      <label>
        Recover failed deliveries created since (RFC 3339, e.g. 2026-11-22T10:00:00Z)
        <div role="group">
          <input
            type="text"
            name="since"
            spellcheck={false}
            autocomplete="off"
            required
            value={since}
            onInput={(e) => setSince((e.target as HTMLInputElement).value)}
          />
          <button type="submit" aria-busy={action.busy ? 'true' : undefined}>
            Recover
          </button>
        </div>
      </label>
      {result !== undefined ? (
        <p role="status">{result === 1 ? '1 delivery queued again.' : `${result} deliveries queued again.`}</p>
      ) : null}
      {action.error ? <ErrorBox error={action.error} /> : null}
    </form>
  );
}

function DangerZone({ path, name }: { path: string; name: string }) {
  const action = useAction();
  return (
    <details class="danger">
      <summary>Delete this webhook</summary>
      <p>Deleting “{plain(name)}” stops its deliveries and removes its delivery log.</p>
      <button
        type="button"
        class="contrast"
        aria-busy={action.busy ? 'true' : undefined}
        onClick={() =>
          action.run(async () => {
            await api.del(path);
            navigate('/webhooks');
          })
        }
      >
        Delete webhook
      </button>
      {action.error ? <ErrorBox error={action.error} /> : null}
    </details>
  );
}
