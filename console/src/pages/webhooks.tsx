import { useState } from 'preact/hooks';
import { api, query } from '../api';
import type { Delivery, Webhook } from '../types';
import { Empty, ErrorBox, Loading, Pager, StatusBadge, useLoad } from '../ui';

const PER_PAGE = 20;

export function WebhooksPage() {
  const [page, setPage] = useState(1);
  const list = useLoad(() => api.get<Webhook[]>(`/portal-api/webhooks${query({ page, per_page: PER_PAGE })}`), [page]);
  return (
    <section>
      <div class="title-row">
        <h2>Webhooks</h2>
        <a href="#/webhooks/new" role="button">
          New webhook
        </a>
      </div>
      {list.error ? <ErrorBox error={list.error} onRetry={list.reload} /> : null}
      {list.loading && !list.data ? <Loading what="webhooks" /> : null}
      {list.data && list.data.length === 0 && page === 1 ? (
        <Empty>
          No webhooks yet. <a href="#/webhooks/new">Create one</a> to receive the portal's events.
        </Empty>
      ) : null}
      {list.data && list.data.length > 0 ? (
        <div class="overflow-auto">
          <table class="striped stack" data-testid="webhooks">
            <thead>
              <tr>
                <th>Name</th>
                <th>Target</th>
                <th>Events</th>
                <th>State</th>
                <th>Health (last 20 deliveries)</th>
              </tr>
            </thead>
            <tbody>
              {list.data.map((w) => (
                <tr key={w.ID} data-webhook={w.Name}>
                  <td data-label="Name">
                    <a href={`#/webhooks/${w.ID}`}>{w.Name}</a>
                  </td>
                  <td data-label="Target" class="wrap">
                    <span>
                      <code>{w.Method}</code> {w.URL}
                    </span>
                  </td>
                  <td data-label="Events">{w.Events.length === 1 ? w.Events[0] : `${w.Events.length} events`}</td>
                  <td data-label="State">{w.Active ? <StatusBadge status="active" /> : <StatusBadge status="inactive" />}</td>
                  <td data-label="Health (last 20 deliveries)">
                    <Health id={w.ID} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      {list.data ? <Pager page={page} count={list.data.length} perPage={PER_PAGE} onPage={setPage} /> : null}
    </section>
  );
}

/** Success rate and last failure over the webhook's most recent deliveries. */
function Health({ id }: { id: string }) {
  const recent = useLoad(() => api.get<Delivery[]>(`/portal-api/webhooks/${encodeURIComponent(id)}/deliveries?per_page=20`), [id]);
  if (recent.error) return <span class="muted">{recent.error.message}</span>;
  if (!recent.data) return <span class="muted" aria-busy="true" />;
  const done = recent.data.filter((d) => d.Status !== 'pending');
  const pending = recent.data.length - done.length;
  if (recent.data.length === 0) return <span class="muted">no deliveries yet</span>;
  const ok = done.filter((d) => d.Status === 'delivered').length;
  const rate = done.length ? Math.round((ok / done.length) * 100) : null;
  const lastFailed = recent.data.find((d) => d.Status === 'failed');
  return (
    <span class="health">
      {rate === null ? null : <span class={rate === 100 ? 'ok' : rate >= 80 ? 'warn' : 'bad'}>{rate}% delivered</span>}
      {pending ? <span class="muted"> · {pending} pending</span> : null}
      {lastFailed ? (
        <>
          {' · '}
          <a href={`#/webhooks/${id}/deliveries/${lastFailed.ID}`}>last failure</a>
        </>
      ) : null}
    </span>
  );
}
