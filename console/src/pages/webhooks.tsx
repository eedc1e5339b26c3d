import { useState } from 'preact/hooks';
import { api, query } from '../api';
import type { Webhook, WebhookStats } from '../types';
import { Target } from './destination';
import { FlowControl, HealthSummary, WebhookState } from './health';
import { Empty, ErrorBox, Loading, Pager, plain, useLoad } from '../ui';

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
                <th>Flow control</th>
                <th>Health (24 h)</th>
              </tr>
            </thead>
            <tbody>
              {list.data.map((w) => (
                <tr key={w.ID} data-webhook={w.Name}>
                  <td data-label="Name" class="wrap">
                    <a href={`#/webhooks/${w.ID}`}>{plain(w.Name)}</a>
                  </td>
                  <td data-label="Target" class="wrap">
                    <Target webhook={w} />
                  </td>
                  <td data-label="Events">{w.Events.length === 1 ? w.Events[0] : `${w.Events.length} events`}</td>
                  <td data-label="State">
                    <WebhookState webhook={w} />
                  </td>
                  <td data-label="Flow control">
                    <FlowControl webhook={w} />
                  </td>
                  <td data-label="Health (24 h)">
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

/** Health over the last 24 hours, from the webhook's stats route. */
function Health({ id }: { id: string }) {
  const stats = useLoad(() => api.get<WebhookStats>(`/portal-api/webhooks/${encodeURIComponent(id)}/stats`), [id]);
  if (stats.error) return <span class="muted">{stats.error.message}</span>;
  if (!stats.data) return <span class="muted" aria-busy="true" />;
  return <HealthSummary stats={stats.data} webhookId={id} />;
}
