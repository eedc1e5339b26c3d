import { useState } from 'preact/hooks';
import { api, query } from '../api';
import type { App } from '../types';
import { Empty, ErrorBox, formatTime, Loading, Pager, plain, useLoad } from '../ui';

const PER_PAGE = 20;

export function AppsPage() {
  const [page, setPage] = useState(1);
  const list = useLoad(() => api.get<App[]>(`/portal-api/apps${query({ page, per_page: PER_PAGE })}`), [page]);
  return (
    <section>
      <h2>Applications</h2>
      {list.error ? <ErrorBox error={list.error} onRetry={list.reload} /> : null}
      {list.loading && !list.data ? <Loading what="applications" /> : null}
      {list.data && list.data.length === 0 ? (
        <Empty>No applications{page > 1 ? ' on this page' : ' registered yet'}.</Empty>
      ) : null}
      {list.data && list.data.length > 0 ? (
        <div class="overflow-auto">
          <table class="striped stack" data-testid="apps">
            <thead>
              <tr>
                <th>ID</th>
                <th>Name</th>
                <th>Description</th>
                <th>Owner</th>
                <th>Visibility</th>
                <th>Access requests</th>
                <th>Created</th>
              </tr>
            </thead>
            <tbody>
              {list.data.map((a) => (
                <tr key={a.ID}>
                  <td data-label="ID">{a.ID}</td>
                  <td data-label="Name" class="wrap">
                    {plain(a.Name)}
                  </td>
                  <td data-label="Description" class="wrap">
                    {plain(a.Description) || <span class="muted">—</span>}
                  </td>
                  <td data-label="Owner">{a.UserID ? `User#${a.UserID}` : <span class="muted">—</span>}</td>
                  <td data-label="Visibility">{a.Visibility}</td>
                  <td data-label="Access requests">{(a.AccessRequests[0] ?? []).length}</td>
                  <td data-label="Created">{formatTime(a.CreatedAt)}</td>
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
