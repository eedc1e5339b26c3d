import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiError } from './api';

export interface Loadable<T> {
  data: T | undefined;
  error: ApiError | undefined;
  loading: boolean;
  reload: () => void;
}

/** Runs `load` now and whenever `deps` change; `reload()` runs it again keeping the last data on screen. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): Loadable<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<ApiError | undefined>(undefined);
  const [loading, setLoading] = useState(true);
  const [tick, setTick] = useState(0);
  const seq = useRef(0);
  const lastTick = useRef(tick);
  useEffect(() => {
    const mine = ++seq.current;
    // other arguments (another page, another filter) show loading; a reload keeps what is on screen
    if (lastTick.current === tick) setData(undefined);
    lastTick.current = tick;
    setLoading(true);
    load().then(
      (d) => {
        if (mine !== seq.current) return;
        setData(d);
        setError(undefined);
        setLoading(false);
      },
      (e: unknown) => {
        if (mine !== seq.current) return;
        setError(toApiError(e));
        setLoading(false);
      },
    );
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { data, error, loading, reload };
}

export function toApiError(e: unknown): ApiError {
  if (e instanceof ApiError) return e;
  return new ApiError(0, [e instanceof Error ? e.message : String(e)]);
}

/** An action button's state: busy while it runs, the API's words when it fails. */
export function useAction() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | undefined>(undefined);
  const run = useCallback(async (fn: () => Promise<unknown>) => {
    setBusy(true);
    setError(undefined);
    try {
      await fn();
      return true;
    } catch (e) {
      setError(toApiError(e));
      return false;
    } finally {
      setBusy(false);
    }
  }, []);
  return { busy, error, run, clear: () => setError(undefined) };
}

export function Loading({ what }: { what: string }) {
  return (
    <p class="state" aria-busy="true" data-state="loading">
      Loading {what}…
    </p>
  );
}

export function ErrorBox({ error, onRetry }: { error: ApiError; onRetry?: () => void }) {
  return (
    <div class="error-box" role="alert" data-state="error">
      {error.messages.length > 1 ? (
        <ul>
          {error.messages.map((m) => (
            <li key={m}>{m}</li>
          ))}
        </ul>
      ) : (
        <p>{error.messages[0]}</p>
      )}
      {error.status ? <small>HTTP {error.status}</small> : null}
      {onRetry ? (
        <button type="button" class="secondary outline" onClick={onRetry}>
          Try again
        </button>
      ) : null}
    </div>
  );
}

export function Empty({ children }: { children: ComponentChildren }) {
  return (
    <p class="state empty" data-state="empty">
      {children}
    </p>
  );
}

/** Pages of a bare-array list: there is a next page while a page comes back full. */
export function Pager({
  page,
  count,
  perPage,
  onPage,
}: {
  page: number;
  count: number;
  perPage: number;
  onPage: (p: number) => void;
}) {
  if (page === 1 && count < perPage) return null;
  return (
    <nav class="pager" aria-label="pages">
      <button type="button" class="secondary outline" disabled={page <= 1} onClick={() => onPage(page - 1)}>
        ← Newer
      </button>
      <span>Page {page}</span>
      <button type="button" class="secondary outline" disabled={count < perPage} onClick={() => onPage(page + 1)}>
        Older →
      </button>
    </nav>
  );
}

/** A secret shown as dots until the operator asks to see it. */
export function Masked({ value, label }: { value: string; label: string }) {
  const [shown, setShown] = useState(false);
  if (!value) return <span class="muted">—</span>;
  return (
    <span class="masked">
      <code data-secret={shown ? 'shown' : 'hidden'}>{shown ? value : '•'.repeat(12)}</code>
      <button
        type="button"
        class="secondary outline small"
        aria-label={`${shown ? 'Hide' : 'Reveal'} ${label}`}
        onClick={() => setShown(!shown)}
      >
        {shown ? 'Hide' : 'Reveal'}
      </button>
    </span>
  );
}

export function StatusBadge({ status }: { status: string }) {
  return (
    <span class={`badge badge-${status}`} data-status={status}>
      {status}
    </span>
  );
}

// the one formatter of every time on screen (a plain module, so the unit specs can load it)
export { formatTime } from './time';
export { plain } from './text';

/** Calls `fn` every `ms` while `on`, and not while the tab is hidden. */
export function useInterval(fn: () => void, ms: number, on: boolean): void {
  const latest = useRef(fn);
  latest.current = fn;
  useEffect(() => {
    if (!on) return;
    const t = setInterval(() => {
      if (document.visibilityState === 'visible') latest.current();
    }, ms);
    return () => clearInterval(t);
  }, [ms, on]);
}

/** A switch for refreshing a screen on its own every few seconds. */
export function AutoRefresh({ on, onChange }: { on: boolean; onChange: (on: boolean) => void }) {
  return (
    <label class="auto-refresh">
      <input
        type="checkbox"
        role="switch"
        checked={on}
        onChange={(e) => onChange((e.target as HTMLInputElement).checked)}
      />
      Auto-refresh
    </label>
  );
}
