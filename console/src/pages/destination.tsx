import { plain } from '../text';
import type { Webhook } from '../types';

/**
 * Where a webhook's deliveries go, in one line: the method and URL of an HTTP webhook; the type, the URL (its
 * password masked by the service) and the options of a broker.
 */
export function Target({ webhook: w }: { webhook: Webhook }) {
  if (!w.Type || w.Type === 'http') {
    return (
      <span data-testid="target">
        <code>{w.Method}</code> {w.URL}
      </span>
    );
  }
  const options = Object.entries(w.Options ?? {});
  return (
    <span data-testid="target" data-type={w.Type}>
      <code>{w.Type}</code> {w.URL}
      {options.length ? (
        <small class="muted">
          {' '}
          {options.map(([k, v]) => `${k} ${v === '' ? "''" : plain(String(v))}`).join(' · ')}
        </small>
      ) : null}
    </span>
  );
}
