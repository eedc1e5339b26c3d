import { useState } from 'preact/hooks';
import { api, ApiError } from '../api';
import { navigate } from '../router';
import {
  DESTINATION_TYPES,
  DESTINATIONS,
  type DestinationType,
  type FilterTestResult,
  OPERATIONAL_EVENTS,
  SIGNATURE_SCHEMES,
  WEBHOOK_EVENTS,
  WEBHOOK_METHODS,
  type CreatedWebhook,
  type SavedWebhook,
  type SignatureScheme,
  type Webhook,
  type WebhookEvent,
  type WebhookInput,
  type WebhookMethod,
} from '../types';
import { ErrorBox, Loading, plain, useAction, useLoad } from '../ui';

const BLANK: WebhookInput = {
  Name: '',
  Type: 'http',
  URL: '',
  Options: {},
  Method: 'POST',
  Timeout: 30,
  Events: [],
  Headers: [],
  Active: true,
  SignatureScheme: 'v1',
  RateLimit: null,
  Ordered: false,
};

/** Create (no id) or edit a webhook. The service validates; its reasons are shown as it words them. */
export function WebhookFormPage({ id }: { id?: string }) {
  const existing = useLoad(
    () => (id ? api.get<Webhook>(`/portal-api/webhooks/${encodeURIComponent(id)}`) : Promise.resolve(undefined)),
    [id],
  );
  if (id && existing.error) return <ErrorBox error={existing.error} onRetry={existing.reload} />;
  if (id && !existing.data) return <Loading what="the webhook" />;
  return (
    <WebhookForm
      key={id ?? 'new'}
      id={id}
      initial={existing.data ? fromWebhook(existing.data) : BLANK}
      initialFilter={existing.data?.Filter ? JSON.stringify(existing.data.Filter, null, 2) : ''}
    />
  );
}

function fromWebhook(w: Webhook): WebhookInput {
  return {
    Name: w.Name,
    Type: w.Type ?? 'http',
    // a broker URL comes with its password masked: sent back unchanged, the service keeps the stored one
    URL: w.URL,
    Options: { ...(w.Options ?? {}) },
    Method: w.Method,
    Timeout: w.Timeout,
    Events: [...w.Events],
    Headers: w.Headers.map((h) => ({ Name: h.Name, Value: h.Value })),
    Active: w.Active,
    SignatureScheme: w.SignatureScheme,
    RateLimit: w.RateLimit,
    Ordered: w.Ordered,
  };
}

/** A sample event to try a filter on, shaped as deliveries carry events. */
function sampleEvent(event: string): string {
  const message = {
    ID: 1,
    AppID: 1,
    Status: 'approved',
    Catalogue: 'Payments',
    Plan: 'Gold',
    Products: ['payments-api'],
  };
  return JSON.stringify({ Event: event, Message: message, Timestamp: new Date().toISOString() }, null, 2);
}

/** The JSON typed into a field, or an error naming the field (the service never sees text that is not JSON). */
function parseJson(field: string, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new ApiError(0, [`${field} is not valid JSON: ${(e as Error).message}`]);
  }
}

function WebhookForm({ id, initial, initialFilter }: { id?: string; initial: WebhookInput; initialFilter: string }) {
  const [form, setForm] = useState<WebhookInput>(initial);
  const [filterText, setFilterText] = useState(initialFilter);
  const [sample, setSample] = useState(() => sampleEvent(initial.Events[0] ?? 'AccessRequestApproved'));
  const [tried, setTried] = useState<FilterTestResult | undefined>(undefined);
  const tryFilter = useAction();
  const [created, setCreated] = useState<CreatedWebhook | undefined>(undefined);
  const [savedWarnings, setSavedWarnings] = useState<string[] | undefined>(undefined);
  const save = useAction();
  const set = <K extends keyof WebhookInput>(key: K, value: WebhookInput[K]) =>
    setForm((f) => ({ ...f, [key]: value }));
  const toggleEvent = (e: WebhookEvent) =>
    set('Events', form.Events.includes(e) ? form.Events.filter((x) => x !== e) : [...form.Events, e]);
  const destination = DESTINATIONS[form.Type];
  const setOption = (name: string, value: string) => set('Options', { ...form.Options, [name]: value });
  /** The options of the chosen type that are filled in (an empty optional one takes the type's default). */
  const options = () =>
    Object.fromEntries(
      destination.options.flatMap((o) => (form.Options[o.name] ? [[o.name, form.Options[o.name]]] : [])),
    );
  const filter = () => (filterText.trim() === '' ? null : parseJson('Filter', filterText));

  if (created) {
    return (
      <article>
        <h2>Webhook created</h2>
        <p>
          “{plain(created.Name)}” will receive {created.Events.join(', ')}. Its signing secret, for verifying deliveries
          (you can reveal it again on the webhook's page):
        </p>
        <p>
          <code data-testid="new-secret">{created.Secret}</code>
        </p>
        <Warnings warnings={created.Warnings} />
        <a href={`#/webhooks/${created.ID}`} role="button">
          Open the webhook
        </a>
      </article>
    );
  }

  const submit = (e: Event) => {
    e.preventDefault();
    const { SignatureScheme, Method, Options: _options, ...rest } = form;
    void save.run(async () => {
      const f = filter();
      const body = {
        ...rest,
        // a broker takes options and publishes; only HTTP has a method
        ...(form.Type === 'http' ? { Method } : { Options: options() }),
        Headers: form.Headers.filter((h) => h.Name.trim() !== '' || h.Value !== ''),
        // on PUT, null removes a filter
        ...(f !== null ? { Filter: f } : id ? { Filter: null } : {}),
        // giving a scheme on PUT rotates the key, so only a change is sent
        ...(!id || SignatureScheme !== initial.SignatureScheme ? { SignatureScheme } : {}),
      };
      if (id) {
        const saved = await api.put<SavedWebhook>(`/portal-api/webhooks/${encodeURIComponent(id)}`, body);
        // a warning (a target the delivery guard refuses, say) is worth reading before moving on
        if (saved.Warnings?.length) setSavedWarnings(saved.Warnings);
        else navigate(`/webhooks/${id}`);
      } else {
        setCreated(await api.post<CreatedWebhook>('/portal-api/webhooks', body));
      }
    });
  };

  return (
    <section>
      <nav aria-label="breadcrumb">
        <ul>
          <li>
            <a href="#/webhooks">Webhooks</a>
          </li>
          {id ? (
            <li>
              <a href={`#/webhooks/${id}`}>{plain(initial.Name)}</a>
            </li>
          ) : null}
          <li>{id ? 'Edit' : 'New webhook'}</li>
        </ul>
      </nav>
      <h2>{id ? `Edit ${plain(initial.Name)}` : 'New webhook'}</h2>
      <form onSubmit={submit} novalidate>
        <div class="grid">
          <label>
            Name
            <input name="Name" value={form.Name} onInput={(e) => set('Name', (e.target as HTMLInputElement).value)} />
          </label>
          <label>
            Destination type
            <select
              name="Type"
              value={form.Type}
              onChange={(e) => set('Type', (e.target as HTMLSelectElement).value as DestinationType)}
            >
              {DESTINATION_TYPES.map((t) => (
                <option key={t} value={t}>
                  {DESTINATIONS[t].label}
                </option>
              ))}
            </select>
          </label>
        </div>
        <label>
          {form.Type === 'http' ? 'Target URL' : 'Broker URL'}
          <input
            name="URL"
            type="url"
            placeholder={destination.urlPlaceholder}
            value={form.URL}
            onInput={(e) => set('URL', (e.target as HTMLInputElement).value)}
          />
          {form.Type !== 'http' ? (
            <small data-testid="credentials-note">
              {id && form.Type === initial.Type && form.URL === initial.URL
                ? 'The password shows as ***: left as it is, the stored one is kept.'
                : 'Credentials in the URL are stored encrypted and never shown again in clear.'}
            </small>
          ) : null}
        </label>
        {destination.options.length ? (
          <div class="grid">
            {destination.options.map((o) => (
              <label key={o.name}>
                {o.label}
                <input
                  name={`Options.${o.name}`}
                  placeholder={o.placeholder}
                  required={o.required}
                  value={form.Options[o.name] ?? ''}
                  onInput={(e) => setOption(o.name, (e.target as HTMLInputElement).value)}
                />
              </label>
            ))}
          </div>
        ) : null}
        <div class="grid">
          {form.Type === 'http' ? (
            <label>
              Method
              <select
                name="Method"
                value={form.Method}
                onChange={(e) => set('Method', (e.target as HTMLSelectElement).value as WebhookMethod)}
              >
                {WEBHOOK_METHODS.map((m) => (
                  <option key={m} value={m}>
                    {m}
                  </option>
                ))}
              </select>
            </label>
          ) : null}
          <label>
            Timeout (seconds)
            <input
              name="Timeout"
              type="number"
              min={1}
              max={60}
              value={form.Timeout}
              onInput={(e) => set('Timeout', Number((e.target as HTMLInputElement).value))}
            />
          </label>
          <label class="switch-label">
            <input
              name="Active"
              type="checkbox"
              role="switch"
              checked={form.Active}
              onChange={(e) => set('Active', (e.target as HTMLInputElement).checked)}
            />
            Active (inactive webhooks get no deliveries)
          </label>
        </div>
        <div class="grid">
          <label>
            Rate limit (deliveries per second; empty: no limit)
            <input
              name="RateLimit"
              type="number"
              min={1}
              max={10000}
              value={form.RateLimit ?? ''}
              onInput={(e) => {
                const v = (e.target as HTMLInputElement).value;
                set('RateLimit', v === '' ? null : Number(v));
              }}
            />
          </label>
          <label class="switch-label">
            <input
              name="Ordered"
              type="checkbox"
              role="switch"
              checked={form.Ordered}
              onChange={(e) => set('Ordered', (e.target as HTMLInputElement).checked)}
            />
            Ordered (one delivery at a time, in event order)
          </label>
        </div>
        <label>
          Signature scheme
          <select
            name="SignatureScheme"
            value={form.SignatureScheme}
            onChange={(e) => set('SignatureScheme', (e.target as HTMLSelectElement).value as SignatureScheme)}
          >
            {SIGNATURE_SCHEMES.map((s) => (
              <option key={s.value} value={s.value}>
                {s.label}
              </option>
            ))}
          </select>
          {id && form.SignatureScheme !== initial.SignatureScheme ? (
            <small>
              Switching scheme rotates the key: for 24 hours deliveries are signed with both the old and the new key.
            </small>
          ) : null}
        </label>
        <fieldset>
          <legend>Events</legend>
          <div class="events">
            {WEBHOOK_EVENTS.map((e) => (
              <label
                key={e}
                title={OPERATIONAL_EVENTS.includes(e) ? 'about the dispatcher itself, for operators' : undefined}
              >
                <input
                  type="checkbox"
                  name="Events"
                  value={e}
                  checked={form.Events.includes(e)}
                  onChange={() => toggleEvent(e)}
                />
                {e}
              </label>
            ))}
          </div>
        </fieldset>
        <fieldset class="filter">
          <legend>Filter on the event's content</legend>
          <label>
            Filter (JSON; empty: every event chosen above)
            <textarea
              name="Filter"
              rows={4}
              spellcheck={false}
              placeholder='{"all": [{"path": "Message.Plan", "eq": "Gold"}, {"path": "Message.Catalogue", "prefix": "Pay"}]}'
              value={filterText}
              onInput={(e) => {
                setFilterText((e.target as HTMLTextAreaElement).value);
                setTried(undefined);
              }}
            />
            <small>
              Rules: eq, in, gt, gte, lt, lte, exists, prefix, regex over a path (Event, Message.…, Timestamp); combine
              them with all, any and not.
            </small>
          </label>
          <label>
            Sample event to try it on (JSON)
            <textarea
              name="SampleEvent"
              rows={6}
              spellcheck={false}
              value={sample}
              onInput={(e) => {
                setSample((e.target as HTMLTextAreaElement).value);
                setTried(undefined);
              }}
            />
          </label>
          <button
            type="button"
            class="secondary outline"
            aria-busy={tryFilter.busy ? 'true' : undefined}
            disabled={tryFilter.busy || filterText.trim() === ''}
            onClick={() =>
              tryFilter.run(async () => {
                setTried(undefined);
                const body = { Filter: filter(), Event: parseJson('Sample event', sample) };
                setTried(await api.post<FilterTestResult>('/portal-api/webhooks/filters/test', body));
              })
            }
          >
            Try filter
          </button>
          {tryFilter.error ? <ErrorBox error={tryFilter.error} /> : null}
          {tried ? (
            <p role="status" data-testid="filter-result" data-matches={String(tried.Matches)}>
              {tried.Matches
                ? 'The filter accepts this event: the webhook would get a delivery.'
                : 'The filter refuses this event: no delivery would be made.'}
            </p>
          ) : null}
        </fieldset>
        <fieldset>
          <legend>Headers sent with every delivery</legend>
          {form.Headers.map((h, i) => (
            <div role="group" key={i} class="header-row">
              <input
                aria-label={`Header ${i + 1} name`}
                placeholder="X-Api-Key"
                value={h.Name}
                onInput={(e) =>
                  set(
                    'Headers',
                    form.Headers.map((x, j) => (j === i ? { ...x, Name: (e.target as HTMLInputElement).value } : x)),
                  )
                }
              />
              <input
                aria-label={`Header ${i + 1} value`}
                placeholder="value"
                value={h.Value}
                onInput={(e) =>
                  set(
                    'Headers',
                    form.Headers.map((x, j) => (j === i ? { ...x, Value: (e.target as HTMLInputElement).value } : x)),
                  )
                }
              />
              <button
                type="button"
                class="secondary outline"
                aria-label={`Remove header ${i + 1}`}
                onClick={() =>
                  set(
                    'Headers',
                    form.Headers.filter((_, j) => j !== i),
                  )
                }
              >
                Remove
              </button>
            </div>
          ))}
          <button
            type="button"
            class="secondary outline"
            onClick={() => set('Headers', [...form.Headers, { Name: '', Value: '' }])}
          >
            Add header
          </button>
        </fieldset>
        {save.error ? <ErrorBox error={save.error} /> : null}
        {savedWarnings ? (
          <>
            <p role="status">Saved, with a warning from the service:</p>
            <Warnings warnings={savedWarnings} />
          </>
        ) : null}
        <div class="actions">
          <button type="submit" aria-busy={save.busy ? 'true' : undefined} disabled={save.busy}>
            {id ? 'Save' : 'Create webhook'}
          </button>
          <a href={id ? `#/webhooks/${id}` : '#/webhooks'} role="button" class="secondary outline">
            Cancel
          </a>
        </div>
      </form>
    </section>
  );
}

/** Warnings the service gives with an accepted webhook, in its words. */
function Warnings({ warnings }: { warnings?: string[] }) {
  if (!warnings?.length) return null;
  return (
    <div class="warning-box" role="note" data-testid="warnings">
      <ul>
        {warnings.map((w) => (
          <li key={w}>{w}</li>
        ))}
      </ul>
    </div>
  );
}
