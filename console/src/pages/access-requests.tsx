import { useState } from 'preact/hooks';
import { api, query } from '../api';
import { ACCESS_REQUEST_STATUSES, type AccessRequest, type Credential } from '../types';
import { Empty, ErrorBox, formatTime, Loading, Masked, Pager, plain, StatusBadge, useAction, useLoad } from '../ui';

const PER_PAGE = 20;

export function AccessRequestsPage() {
  const [page, setPage] = useState(1);
  const [status, setStatus] = useState('');
  const list = useLoad(
    () => api.get<AccessRequest[]>(`/portal-api/access_requests${query({ page, per_page: PER_PAGE, status })}`),
    [page, status],
  );
  return (
    <section>
      <div class="title-row">
        <h2>Access requests</h2>
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
          {ACCESS_REQUEST_STATUSES.map((s) => (
            <option key={s} value={s}>
              {s}
            </option>
          ))}
        </select>
      </div>
      {list.error ? <ErrorBox error={list.error} onRetry={list.reload} /> : null}
      {list.loading && !list.data ? <Loading what="access requests" /> : null}
      {list.data && list.data.length === 0 ? (
        <Empty>{status ? `No ${status} access requests.` : 'No access requests yet.'}</Empty>
      ) : null}
      {list.data && list.data.length > 0 ? (
        <div class="overflow-auto">
          <table class="striped stack" data-testid="access-requests">
            <thead>
              <tr>
                <th>ID</th>
                <th>Application</th>
                <th>Products</th>
                <th>Plan</th>
                <th>Auth</th>
                <th>Status</th>
                <th>Updated</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {list.data.map((r) => (
                <tr key={r.ID} data-request={r.ID}>
                  <td data-label="ID">
                    <a href={`#/access-requests/${r.ID}`}>{r.ID}</a>
                  </td>
                  <td data-label="Application" class="wrap">
                    {plain(r.Client)}
                  </td>
                  <td data-label="Products" class="wrap">
                    {plain(r.Products)}
                  </td>
                  <td data-label="Plan" class="wrap">
                    {plain(r.Plan)}
                  </td>
                  <td data-label="Auth">{r.AuthType}</td>
                  <td data-label="Status">
                    <StatusBadge status={r.Status} />
                  </td>
                  <td data-label="Updated">{formatTime(r.UpdatedAt)}</td>
                  <td>
                    <Decide request={r} onDone={list.reload} compact />
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

/** Approve and reject buttons for the transitions the service allows from the request's status. */
function Decide({ request, onDone, compact }: { request: AccessRequest; onDone: () => void; compact?: boolean }) {
  const action = useAction();
  const path = `/portal-api/access_requests/${request.ID}`;
  const act = (verb: 'approve' | 'reject') =>
    action.run(async () => {
      await api.put(`${path}/${verb}`);
      onDone();
    });
  return (
    <div class={compact ? 'decide compact' : 'decide'}>
      {request.Status === 'pending' ? (
        <button
          type="button"
          class="small"
          aria-busy={action.busy ? 'true' : undefined}
          disabled={action.busy}
          onClick={() => act('approve')}
        >
          Approve
        </button>
      ) : null}
      {request.Status !== 'rejected' ? (
        <button type="button" class="secondary small" disabled={action.busy} onClick={() => act('reject')}>
          Reject
        </button>
      ) : null}
      {action.error ? <ErrorBox error={action.error} /> : null}
    </div>
  );
}

export function AccessRequestPage({ id }: { id: string }) {
  const item = useLoad(() => api.get<AccessRequest>(`/portal-api/access_requests/${encodeURIComponent(id)}`), [id]);
  if (item.error && !item.data) return <ErrorBox error={item.error} onRetry={item.reload} />;
  if (!item.data) return <Loading what="the access request" />;
  const r = item.data;
  return (
    <section>
      <nav aria-label="breadcrumb">
        <ul>
          <li>
            <a href="#/access-requests">Access requests</a>
          </li>
          <li>#{r.ID}</li>
        </ul>
      </nav>
      <div class="title-row">
        <h2>
          Access request #{r.ID} <StatusBadge status={r.Status} />
        </h2>
        <Decide request={r} onDone={item.reload} />
      </div>
      <article>
        <dl class="grid-2 tight">
          <div>
            <dt>Application</dt>
            <dd>
              {plain(r.Client)} (#{r.AppID})
            </dd>
            <dt>Requested by</dt>
            <dd>{plain(r.User)}</dd>
            <dt>Catalogue / plan</dt>
            <dd>
              {plain(r.Catalogue)} / {plain(r.Plan)}
            </dd>
          </div>
          <div>
            <dt>Products</dt>
            <dd>{plain(r.Products)}</dd>
            <dt>Auth type</dt>
            <dd>
              {r.AuthType}
              {r.DCREnabled ? ' (dynamic client registration)' : ''}
            </dd>
            <dt>Created / updated</dt>
            <dd>
              {formatTime(r.CreatedAt)} / {formatTime(r.UpdatedAt)}
            </dd>
          </div>
        </dl>
      </article>
      <h3>Credentials</h3>
      {r.Credentials.length === 0 ? (
        <Empty>
          {r.Status === 'approved'
            ? 'No credentials in force.'
            : 'Credentials are issued when the request is approved.'}
        </Empty>
      ) : null}
      {r.Credentials.map((c, i) => (
        <CredentialCard key={i} credential={c} />
      ))}
    </section>
  );
}

function CredentialCard({ credential: c }: { credential: Credential }) {
  const rows: [string, string, boolean][] = [
    ['Credential', c.Credential, true],
    ['Credential hash (SHA-256)', c.CredentialHash, false],
    ['OAuth client id', c.OAuthClientID, false],
    ['OAuth client secret', c.OAuthClientSecret, true],
    ['Redirect URI', c.RedirectURI, false],
    ['Scope', c.Scope, false],
    ['Registration access token', c.DCRRegistrationAccessToken, true],
    ['Registration client URI', c.DCRRegistrationClientURI, false],
    ['Expires', c.Expires === '1970-01-01 00:00' ? 'never' : formatTime(c.Expires), false],
  ];
  return (
    <article class="credential" data-testid="credential">
      <dl>
        {rows
          .filter(([, v]) => v)
          .map(([label, value, secret]) => (
            <div class="kv" key={label}>
              <dt>{label}</dt>
              <dd>{secret ? <Masked value={value} label={label} /> : <code>{value}</code>}</dd>
            </div>
          ))}
      </dl>
    </article>
  );
}
