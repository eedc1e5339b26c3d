import { api } from '../api';
import type { AttemptError, DeliveryWithAttempts, Webhook } from '../types';
import { useState } from 'preact/hooks';
import {
  AutoRefresh,
  Empty,
  ErrorBox,
  formatTime,
  Loading,
  plain,
  StatusBadge,
  useAction,
  useInterval,
  useLoad,
} from '../ui';

/** What each error kind means; the record type makes a new kind need its words. */
const ERROR_WORDS: Record<AttemptError, string> = {
  timeout: 'timeout: no answer (or no confirmation from the broker) within the webhook timeout',
  connection: 'connection: the receiver or broker could not be reached',
  blocked_address: 'blocked_address: the target address is not allowed',
  http_status: 'http_status: the receiver answered with a non-2xx status',
  unroutable: 'unroutable: the broker had no queue or stream to put the message in',
  rejected: 'rejected: the broker refused the message',
};

export function DeliveryPage({ webhookId, deliveryId }: { webhookId: string; deliveryId: string }) {
  const hookPath = `/portal-api/webhooks/${encodeURIComponent(webhookId)}`;
  const path = `${hookPath}/deliveries/${encodeURIComponent(deliveryId)}`;
  const delivery = useLoad(() => api.get<DeliveryWithAttempts>(path), [path]);
  // for the breadcrumb: the webhook by its name
  const hook = useLoad(() => api.get<Webhook>(hookPath), [hookPath]);
  const redeliver = useAction();
  const [auto, setAuto] = useState(false);
  // a finished delivery changes only by hand, so refreshing on its own stops there
  useInterval(delivery.reload, 3000, auto && delivery.data?.Status === 'pending');

  if (delivery.error && !delivery.data) return <ErrorBox error={delivery.error} onRetry={delivery.reload} />;
  if (!delivery.data) return <Loading what="the delivery" />;
  const d = delivery.data;
  // a broker answers with a confirmation or a reason, not an HTTP body (a neutral name until the webhook is read)
  const answerName = !hook.data
    ? 'Answer'
    : hook.data.Type && hook.data.Type !== 'http'
      ? "Broker's answer"
      : 'Response body';
  return (
    <section>
      <nav aria-label="breadcrumb">
        <ul>
          <li>
            <a href="#/webhooks">Webhooks</a>
          </li>
          <li>
            <a href={`#/webhooks/${webhookId}`} data-testid="webhook-crumb">
              {plain(hook.data?.Name) ?? 'Webhook'}
            </a>
          </li>
          <li>Delivery</li>
        </ul>
      </nav>
      <div class="title-row">
        <h2>
          {d.Event} <StatusBadge status={d.Status} />
        </h2>
        <div class="toolbar">
          {d.Status === 'pending' ? <AutoRefresh on={auto} onChange={setAuto} /> : null}
          <button
            type="button"
            class="secondary outline"
            aria-busy={delivery.loading ? 'true' : undefined}
            onClick={delivery.reload}
          >
            Refresh
          </button>
          <button
            type="button"
            aria-busy={redeliver.busy ? 'true' : undefined}
            disabled={redeliver.busy}
            onClick={() =>
              redeliver.run(async () => {
                await api.post(`${path}/redeliver`);
                delivery.reload();
              })
            }
          >
            Redeliver
          </button>
        </div>
      </div>
      {redeliver.error ? <ErrorBox error={redeliver.error} /> : null}
      {delivery.error ? <ErrorBox error={delivery.error} onRetry={delivery.reload} /> : null}
      <article>
        <dl class="grid-2 tight">
          <div>
            <dt>Delivery id (webhook-id header)</dt>
            <dd>
              <code>{d.ID}</code>
            </dd>
            <dt>Event id</dt>
            <dd>
              <code>{d.EventID}</code>
            </dd>
          </div>
          <div>
            <dt>Created</dt>
            <dd>{formatTime(d.CreatedAt)}</dd>
            <dt>Next attempt</dt>
            <dd>{formatTime(d.NextAttemptAt)}</dd>
          </div>
        </dl>
      </article>
      <h3>Attempts ({d.Attempts.length})</h3>
      {d.Attempts.length === 0 ? <Empty>No attempt yet: the first one is on its way.</Empty> : null}
      {d.Attempts.length > 0 ? (
        <div class="overflow-auto">
          <table class="striped stack" data-testid="attempts">
            <thead>
              <tr>
                <th>#</th>
                <th>Started</th>
                <th>Trigger</th>
                <th>Status code</th>
                <th>Duration</th>
                <th>Error</th>
                <th>{answerName}</th>
              </tr>
            </thead>
            <tbody>
              {[...d.Attempts].reverse().map((a) => (
                <tr key={a.Number} data-attempt={a.Number} data-error={a.Error ?? ''}>
                  <td data-label="#">{a.Number}</td>
                  <td data-label="Started">{formatTime(a.StartedAt)}</td>
                  <td data-label="Trigger">{a.Trigger}</td>
                  <td data-label="Status code">{a.StatusCode ?? <span class="muted">none</span>}</td>
                  <td data-label="Duration">{a.DurationMs} ms</td>
                  <td data-label="Error">
                    {a.Error ? (
                      <span class="bad" title={ERROR_WORDS[a.Error]}>
                        {a.Error}
                      </span>
                    ) : (
                      <span class="ok">—</span>
                    )}
                  </td>
                  <td data-label={answerName} class="body-cell">
                    {a.ResponseBody ? <pre>{plain(a.ResponseBody)}</pre> : <span class="muted">empty</span>}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </section>
  );
}
