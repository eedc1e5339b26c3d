import { useState } from 'preact/hooks';
import { ApiError, request } from '../api';
import { ErrorBox, toApiError } from '../ui';

/**
 * Signs in with the portal API token: the token is checked by calling a portal route with it, and kept
 * for this tab only.
 */
export function SignIn({ notice, onSignedIn }: { notice?: ApiError; onSignedIn: (token: string) => void }) {
  const [token, setToken] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | undefined>(notice);

  const submit = async (e: Event) => {
    e.preventDefault();
    const t = token.trim();
    if (!t) {
      setError(new ApiError(0, ['Enter the portal API token.']));
      return;
    }
    setBusy(true);
    setError(undefined);
    try {
      await request('GET', '/portal-api/webhooks?per_page=1', undefined, t);
      onSignedIn(t);
    } catch (err) {
      setError(toApiError(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <main class="container sign-in">
      <article>
        <header>
          <h1>Gateway console</h1>
          <p class="muted">Webhooks, deliveries and access requests of the developer portal.</p>
        </header>
        <form onSubmit={submit} autocomplete="off">
          <label for="token">
            Portal API token
            <input
              id="token"
              name="token"
              type="password"
              autocomplete="off"
              autoFocus
              required
              value={token}
              aria-invalid={error ? 'true' : undefined}
              onInput={(e) => setToken((e.target as HTMLInputElement).value)}
            />
            <small>The value of PORTAL_API_TOKEN. It is kept in this tab only and forgotten when the tab closes.</small>
          </label>
          {error ? <ErrorBox error={error} /> : null}
          <button type="submit" aria-busy={busy ? 'true' : undefined} disabled={busy}>
            Sign in
          </button>
        </form>
      </article>
    </main>
  );
}
