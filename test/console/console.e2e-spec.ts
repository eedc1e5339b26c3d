import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { RABBITMQ_URL, RabbitTopic } from '../helpers/brokers';
import { launchChromium } from '../helpers/chromium';
import { HttpClient } from '../helpers/http-client';
import { createAccessRequest, createApp } from '../helpers/portal';
import { ServiceProcess } from '../helpers/service-process';
import { Sink } from '../helpers/sink';
import { TEST_SECRETS } from '../helpers/test-env';
import { useService } from '../helpers/use-service';

// CONSOLE_SCREENSHOTS=1 also writes the README's screenshots into docs/.
const SHOTS = process.env.CONSOLE_SCREENSHOTS === '1' ? join(__dirname, '..', '..', 'docs') : undefined;
const TOKEN = TEST_SECRETS.PORTAL_API_TOKEN;
const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

/**
 * The operator console in a real Chromium, against an API process started with ROLE=api (the console and
 * Bull Board are part of it) and a separate worker delivering to a loopback receiver.
 */
/**
 * A list re-renders while its requests settle: wait until it shows `n` rows, and fail with what it shows if it never
 * does.
 */
async function rowsSettleAt(page: Page, selector: string, n: number): Promise<void> {
  const deadline = Date.now() + 10_000;
  let seen = await page.locator(selector).count();
  while (seen !== n && Date.now() < deadline) {
    await page.waitForTimeout(100);
    seen = await page.locator(selector).count();
  }
  expect(seen).toBe(n);
}

const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;

/**
 * Every time the page shows is ISO 8601 in UTC to the second (`2026-11-22T10:15:03Z`), none in a locale's form (a
 * 12-hour clock, a month/day date); answers how many times it shows.
 */
async function timesShownAsIso(page: Page): Promise<number> {
  const text = await page.locator('body').innerText();
  expect(text).not.toMatch(/\b\d{1,2}\/\d{1,2}\/\d{2,4}\b|\b\d{1,2}:\d{2}(?::\d{2})?\s?[AP]M\b/i);
  const times = text.match(/\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2})?(?:\.\d+)?(?:Z| ?UTC|[+-]\d{2}:\d{2})?/g) ?? [];
  for (const t of times) expect(t).toMatch(ISO_UTC);
  return times.length;
}

describe('operator console in a browser', () => {
  // the worker in process, beside the API process the console is part of
  const service = useService({
    envVars: { WEBHOOK_RETRY_SCHEDULE: '0,1' },
    vars: { ROLE: 'worker' },
    receiver: true,
    // debug logs, to check below that no credential reaches them
    processes: [{ ROLE: 'api', LOG_LEVEL: 'debug' }],
  });
  let apiProcess: ServiceProcess;
  let sink: Sink;
  let context: BrowserContext;
  let page: Page;
  let base: string;
  let portal: HttpClient;
  const requestedUrls: string[] = [];
  const cspViolations: string[] = [];

  beforeAll(async () => {
    [apiProcess] = service.processes;
    sink = service.sink;
    // a 12-hour locale in a zone far from UTC: the console must show neither
    const chrome = service.adopt(await launchChromium({ locale: 'en-US', timezoneId: 'America/Los_Angeles' }));
    base = `http://127.0.0.1:${apiProcess.port}`;
    portal = new HttpClient(base).with({ authorization: TOKEN });
    context = chrome.context;
    page = context.pages()[0] ?? (await context.newPage());
    // generous for a loaded machine; every wait ends as soon as its condition holds
    page.setDefaultTimeout(15_000);
    page.on('request', (r) => requestedUrls.push(r.url()));
    page.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) cspViolations.push(m.text());
    });
  }, 90_000);

  const shot = async (name: string) => {
    if (SHOTS) await page.screenshot({ path: join(SHOTS, `console-${name}.png`), fullPage: true });
  };

  /** Clicks `refresh` until `selector` shows up: the console reads, it does not push. */
  const refreshUntil = async (selector: string, refresh: string, timeoutMs = 20_000) => {
    const deadline = Date.now() + timeoutMs;
    while ((await page.locator(selector).count()) === 0) {
      if (Date.now() > deadline) throw new Error(`${selector} did not appear within ${timeoutMs} ms`);
      await page.waitForTimeout(300);
      await page.locator(refresh).first().click();
      await page
        .locator(`${refresh}[aria-busy="true"]`)
        .waitFor({ state: 'detached' })
        .catch(() => undefined);
    }
  };

  const newAccessRequest = async (appId: number, product: string) =>
    (await createAccessRequest(portal, { AppID: appId, Catalogue: 'Payments', Plan: 'Gold', Products: [product] }))
      .ID as number;

  it('walks the story: sign in, create a webhook, approve, delivered; a failing receiver, its attempts, redeliver, delivered', async () => {
    const app = await createApp(portal, {
      Name: 'Weather app',
      Description: 'Reads the weather',
      RedirectURLs: 'https://app.example.com/cb',
      UserID: 1,
    });
    const firstRequest = await newAccessRequest(app.ID, 'weather-api');
    // two receivers behind one loopback server: /crm (the story's) and /billing, down until recovered below
    let crmDown = false;
    let billingDown = true;
    sink.responder = (r) => {
      if (r.url === '/billing') return billingDown ? { status: 502, body: 'billing gateway offline' } : { status: 204 };
      if (r.url === '/legacy') return { status: 410, body: 'this endpoint is gone' };
      return crmDown ? { status: 500, body: 'receiver down for maintenance' } : { status: 200, body: 'ok' };
    };
    const billing = await portal.post('/portal-api/webhooks', {
      Name: 'Billing',
      URL: sink.url('/billing'),
      Events: ['AccessRequestApproved'],
    });
    expect(billing.status).toBe(201);
    // and a subscriber that has gone away for good (410): the service switches its webhook off
    expect(
      (
        await portal.post('/portal-api/webhooks', {
          Name: 'Legacy',
          URL: sink.url('/legacy'),
          Events: ['AccessRequestApproved'],
        })
      ).status,
    ).toBe(201);

    // a wrong credential: the API's own words on the sign-in form
    await page.goto(`${base}/console/`);
    await page.getByLabel('Portal API token').fill('not-the-token');
    await page.getByRole('button', { name: 'Sign in' }).click();
    const refusal = page.locator('[role=alert]');
    await refusal.waitFor();
    expect(await refusal.textContent()).toContain('Not authorised: missing or invalid API token');
    await shot('sign-in-error');

    await page.getByLabel('Portal API token').fill(TOKEN);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.locator('tr[data-webhook=Billing]').waitFor();
    expect(await page.evaluate('Object.keys(localStorage).length')).toBe(0);

    // create a webhook subscribed to approvals
    await page.getByRole('button', { name: 'New webhook' }).click();
    await page.getByLabel('Name', { exact: true }).fill('CRM');
    await page.getByLabel('Target URL').fill(sink.url('/crm'));
    await page.getByLabel('Timeout (seconds)').fill('5');
    await page.getByLabel('Rate limit (deliveries per second; empty: no limit)').fill('100');
    await page.getByLabel('AccessRequestApproved').check();
    await page.getByRole('button', { name: 'Add header' }).click();
    await page.getByLabel('Header 1 name').fill('X-Team');
    await page.getByLabel('Header 1 value').fill('ops');
    // the API's validation wording reaches the operator: no events is refused, as the service says
    await page.getByLabel('AccessRequestApproved').uncheck();
    await page.getByRole('button', { name: 'Create webhook' }).click();
    await page.locator('[role=alert]', { hasText: 'Events must be a non-empty array' }).waitFor();
    await page.getByLabel('AccessRequestApproved').check();
    await page.getByRole('button', { name: 'Create webhook' }).click();
    const secret = await page.getByTestId('new-secret').textContent();
    expect(secret).toMatch(/^whsec_/);
    await page.getByRole('button', { name: 'Open the webhook' }).click();
    await page.locator('[data-state=empty]', { hasText: 'No deliveries yet' }).waitFor();
    const webhookId = decodeURIComponent(page.url().split('#/webhooks/')[1]);
    // edit it: the form comes filled in, the change is saved through PUT
    await page.getByRole('button', { name: 'Edit' }).click();
    expect(await page.getByLabel('Name', { exact: true }).inputValue()).toBe('CRM');
    await page.getByLabel('Timeout (seconds)').fill('10');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.locator('dd', { hasText: '10 s' }).waitFor();
    await page.getByRole('button', { name: 'Deactivate' }).click();
    await page.locator('dd [data-status=inactive]').waitFor();
    await page.getByRole('button', { name: 'Activate' }).click();
    await page.locator('dd [data-status=active]').waitFor();
    await page.getByRole('button', { name: 'Reveal secret' }).click();
    await page.getByTestId('secret').filter({ hasText: secret! }).waitFor();
    // rotate it: a new key, the old one signing too for the grace period
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    await page.getByTestId('previous-key').waitFor();
    const rotated = await page.getByTestId('secret').textContent();
    expect(rotated).toMatch(/^whsec_/);
    expect(rotated).not.toBe(secret);
    expect((await portal.get(`/portal-api/webhooks/${webhookId}/secret`)).body.Secret).toBe(rotated);

    // a test event reaches the receiver and shows in the delivery log
    await page.getByLabel('Note carried in the test event').fill('checking the CRM endpoint');
    await page.getByRole('button', { name: 'Send test event' }).click();
    await page.getByRole('link', { name: 'Open the test delivery' }).click();
    await refreshUntil('h2 [data-status=delivered]', 'button:text-is("Refresh")');
    const testEvent = (await sink.waitFor((r) => r.some((x) => x.url === '/crm'), 10_000, 'the test event')).find(
      (x) => x.url === '/crm',
    )!;
    expect(JSON.parse(testEvent.body)).toMatchObject({ Event: 'WebhookTest' });
    expect(testEvent.body).toContain('checking the CRM endpoint');

    // approve the access request; its credential stays masked until revealed
    await page.getByRole('banner').getByRole('link', { name: 'Access requests' }).click();
    const row = page.locator(`tr[data-request="${firstRequest}"]`);
    await row.getByRole('button', { name: 'Approve' }).click();
    await row.locator('[data-status=approved]').waitFor();
    await row.getByRole('link', { name: String(firstRequest) }).click();
    const credential = page.getByTestId('credential');
    await credential.waitFor();
    const issued = (await portal.get(`/portal-api/access_requests/${firstRequest}`)).body.Credentials[0]
      .Credential as string;
    expect(await credential.textContent()).not.toContain(issued);
    await credential.getByRole('button', { name: 'Reveal Credential' }).click();
    expect(await credential.textContent()).toContain(issued);
    // created / updated
    expect(await timesShownAsIso(page)).toBeGreaterThanOrEqual(2);
    await shot('access-request');

    // the delivery arrives, and the console shows it delivered
    const isApproval = (x: { url: string; body: string }) =>
      x.url === '/crm' && x.body.includes('"AccessRequestApproved"');
    await sink.waitFor((r) => r.some(isApproval), 15_000, 'the approval delivery');
    expect(sink.received.find(isApproval)!.headers['x-team']).toBe('ops');
    await page.goto(`${base}/console/#/webhooks/${webhookId}`);
    await refreshUntil('tr[data-status=delivered] >> nth=1', 'button:text-is("Refresh")');
    await rowsSettleAt(page, 'tr[data-delivery]', 2);
    expect(await page.locator('tr[data-delivery]').first().textContent()).toContain('AccessRequestApproved');

    // the receiver fails: the next delivery fails after its two scheduled attempts, each with its error
    crmDown = true;
    const secondRequest = await newAccessRequest(app.ID, 'maps-api');
    await page.getByRole('banner').getByRole('link', { name: 'Access requests' }).click();
    await page.locator(`tr[data-request="${secondRequest}"]`).getByRole('button', { name: 'Approve' }).waitFor();
    expect(await timesShownAsIso(page)).toBeGreaterThanOrEqual(2);
    await shot('access-requests');
    await page.locator(`tr[data-request="${secondRequest}"]`).getByRole('button', { name: 'Approve' }).click();
    await page.locator(`tr[data-request="${secondRequest}"] [data-status=approved]`).waitFor();
    await page.goto(`${base}/console/#/webhooks/${webhookId}`);
    // the delivery log follows on its own when asked to: pending, retried, then failed
    await page.getByLabel('Auto-refresh').check();
    await page.locator('tr[data-status=failed]').waitFor({ timeout: 20_000 });
    await page.getByLabel('Auto-refresh').uncheck();
    await page.getByLabel('Filter by status').selectOption('failed');
    await page.locator('[data-state=loading]').waitFor({ state: 'detached' });
    await page.locator('tr[data-delivery]').first().waitFor();
    await rowsSettleAt(page, 'tr[data-delivery]', 1);
    await page.getByLabel('Filter by status').selectOption('');
    await page.locator('[data-state=loading]').waitFor({ state: 'detached' });
    await page.locator('tr[data-delivery]').nth(2).waitFor();
    // newest first
    expect(await page.locator('tr[data-delivery]').first().getAttribute('data-status')).toBe('failed');
    // the webhook's creation and each delivery's
    expect(await timesShownAsIso(page)).toBeGreaterThanOrEqual(4);
    await shot('webhook');
    await page.locator('tr[data-status=failed] a').click();
    const attempts = page.getByTestId('attempts');
    await attempts.waitFor();
    expect(await attempts.locator('tr[data-attempt]').count()).toBe(2);
    for (const n of [1, 2]) {
      const a = attempts.locator(`tr[data-attempt="${n}"]`);
      expect(await a.getAttribute('data-error')).toBe('http_status');
      expect(await a.textContent()).toContain('500');
      expect(await a.textContent()).toContain('receiver down for maintenance');
      expect(await a.textContent()).toContain('scheduled');
      expect(await a.locator('td[data-label=Started]').textContent()).toMatch(ISO_UTC);
    }
    // the way back names the webhook
    expect(await page.getByTestId('webhook-crumb').textContent()).toBe('CRM');
    expect(await timesShownAsIso(page)).toBeGreaterThanOrEqual(3);
    await shot('delivery-failed');

    // the receiver is back: redeliver by hand, see it delivered
    crmDown = false;
    await page.getByRole('button', { name: 'Redeliver' }).click();
    await refreshUntil('h2 [data-status=delivered]', 'button:text-is("Refresh")');
    const manual = attempts.locator('tr[data-attempt="3"]');
    expect(await manual.textContent()).toContain('manual');
    expect(await manual.getAttribute('data-error')).toBe('');
    await shot('delivery-redelivered');

    // the webhooks list shows which subscriber is failing
    await page.getByRole('banner').getByRole('link', { name: 'Webhooks' }).click();
    await page.locator('tr[data-webhook=CRM] .health').waitFor();
    expect(await page.locator('tr[data-webhook=CRM] .health').textContent()).toContain('100% delivered');
    await page.locator('tr[data-webhook=Billing] .health').waitFor();
    expect(await page.locator('tr[data-webhook=Billing] .health').textContent()).toMatch(
      /^0% delivered · \d failed( · \d in flight)? · last error http_status 502$/,
    );
    expect(await page.locator('tr[data-webhook=CRM] [data-testid=flow]').textContent()).toBe('≤ 100/s · unordered');
    expect(
      await page.locator('tr[data-webhook=Legacy] [data-disabled-reason]').getAttribute('data-disabled-reason'),
    ).toBe('gone');
    // switched off since a time
    expect(await timesShownAsIso(page)).toBeGreaterThanOrEqual(1);
    await shot('webhooks');

    // Billing is back: recover every failed delivery since a time, and they arrive
    billingDown = false;
    await page.locator('tr[data-webhook=Billing] a', { hasText: 'Billing' }).click();
    await refreshUntil('tr[data-status=failed] >> nth=1', 'button:text-is("Refresh")');
    // the field comes filled in with a day ago in the form times are shown; a date alone is refused in the API's words
    const since = page.getByLabel(/Recover failed deliveries created since/);
    const dayAgo = await since.inputValue();
    expect(dayAgo).toMatch(ISO_UTC);
    expect(Math.abs(Date.parse(dayAgo) - (Date.now() - 24 * 3600_000))).toBeLessThan(10 * 60_000);
    await since.fill(dayAgo.slice(0, 10));
    await page.getByRole('button', { name: 'Recover' }).click();
    await page.locator('.recover [role=alert]', { hasText: 'since must be an RFC 3339 date-time' }).waitFor();
    await since.fill(dayAgo);
    await page.getByRole('button', { name: 'Recover' }).click();
    expect(await page.getByRole('status').textContent()).toBe('2 deliveries queued again.');
    await refreshUntil('tr[data-status=delivered] >> nth=1', 'button:text-is("Refresh")');
    expect(await page.locator('tr[data-status=failed]').count()).toBe(0);
    await page.getByRole('button', { name: 'Refresh health' }).click();
    await page.getByTestId('stats').locator('dd', { hasText: '100%' }).waitFor();
    expect(await page.getByTestId('last-failure').textContent()).toContain('billing gateway offline');

    // a narrow window: the page itself does not scroll sideways
    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByRole('banner').getByRole('link', { name: 'Webhooks' }).click();
    await page.locator('tr[data-webhook=Billing] .health', { hasText: '100% delivered' }).waitFor();
    expect(await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth')).toBe(true);
    await shot('webhooks-narrow');
    await page.setViewportSize({ width: 1280, height: 860 });

    // the applications list, and deleting a webhook from its page
    await page.getByRole('banner').getByRole('link', { name: 'Apps' }).click();
    expect(await page.getByTestId('apps').locator('tbody tr').first().textContent()).toContain('Weather app');
    expect(await timesShownAsIso(page)).toBeGreaterThanOrEqual(1);
    await page.getByRole('banner').getByRole('link', { name: 'Webhooks' }).click();
    await page.locator('tr[data-webhook=Legacy] a', { hasText: 'Legacy' }).click();
    await page.getByText('Delete this webhook').click();
    await page.getByRole('button', { name: 'Delete webhook' }).click();
    await page.locator('tr[data-webhook=CRM]').waitFor();
    expect(await page.locator('tr[data-webhook=Legacy]').count()).toBe(0);

    // no credential ever went into a URL, and nothing broke the page's Content-Security-Policy
    expect(requestedUrls.length).toBeGreaterThan(10);
    for (const url of requestedUrls) {
      expect(url).not.toContain(TOKEN);
      expect(url).not.toContain(issued);
    }
    expect(cspViolations).toEqual([]);
    // nor into the API process's logs
    expect(apiProcess.output).toContain('/portal-api/access_requests');
    for (const secretValue of [TOKEN, issued, secret!]) expect(apiProcess.output).not.toContain(secretValue);
  }, 120_000);

  it('creates a RabbitMQ webhook with its options and a filter tried on a sample, keeps its password masked, and shows the broker’s reason for a failed attempt', async () => {
    // an exchange no queue is bound to: the broker returns what is published there
    const nowhere = await RabbitTopic.bareExchange();
    try {
      const app = await createApp(portal, { Name: 'Bus app', UserID: 1 });
      await page.goto(`${base}/console/#/webhooks/new`);
      await page.getByLabel('Name', { exact: true }).fill('Bus');
      await page.getByLabel('Destination type').selectOption('rabbitmq');
      // a broker is asked for its URL and its options, and has no method
      expect(await page.getByLabel('Method').count()).toBe(0);
      await page.getByLabel('Broker URL').fill(RABBITMQ_URL);
      await page.getByLabel(/^Exchange/).fill(nowhere.name);
      await page.getByLabel(/^Routing key/).fill('portal.access.approved');
      await page.getByLabel('AccessRequestApproved').check();

      // the filter: a wrong rule is refused in the service's words; a right one is tried on sample events
      const filter = page.getByLabel(/^Filter \(JSON/);
      const sample = page.getByLabel('Sample event to try it on (JSON)');
      const tryIt = page.getByRole('button', { name: 'Try filter' });
      await filter.fill('{"path": "Message.Plan", "gte": {"Name": "Gold"}}');
      await tryIt.click();
      await page.locator('.filter [role=alert]', { hasText: 'must be a number or a string' }).waitFor();
      await filter.fill(
        '{"all": [{"path": "Message.Catalogue", "eq": "Payments"}, {"path": "Message.Plan", "prefix": "Go"}]}',
      );
      await tryIt.click();
      await page.locator('[data-testid=filter-result][data-matches=true]').waitFor();
      await sample.fill((await sample.inputValue()).replace('"Payments"', '"Internal"'));
      await tryIt.click();
      await page.locator('[data-testid=filter-result][data-matches=false]').waitFor();
      await shot('webhook-form-broker');
      await page.getByRole('button', { name: 'Create webhook' }).click();
      expect(await page.getByTestId('new-secret').textContent()).toMatch(/^whsec_/);
      await page.getByRole('button', { name: 'Open the webhook' }).click();

      // the page shows the type, the URL with its password masked, the options and the filter
      const target = page.getByTestId('target');
      await target.waitFor();
      expect(await target.getAttribute('data-type')).toBe('rabbitmq');
      const shown = await target.textContent();
      expect(shown).toContain('amqp://guest:***@127.0.0.1:5672/');
      expect(shown).toContain(`Exchange ${nowhere.name}`);
      expect(shown).not.toContain('guest:guest');
      expect(await page.getByTestId('filter').textContent()).toContain('"Message.Catalogue"');
      const webhookId = decodeURIComponent(page.url().split('#/webhooks/')[1]);

      // editing: the URL comes masked; saved unchanged, the service keeps the password it holds
      await page.getByRole('button', { name: 'Edit' }).click();
      expect(await page.getByLabel('Broker URL').inputValue()).toBe('amqp://guest:***@127.0.0.1:5672/');
      expect(await page.getByTestId('credentials-note').textContent()).toContain('The password shows as ***');
      await page.getByLabel(/^Routing key/).fill('portal.approvals');
      await page.getByRole('button', { name: 'Save' }).click();
      await page.getByTestId('target').filter({ hasText: 'RoutingKey portal.approvals' }).waitFor();
      expect(await page.getByTestId('target').textContent()).toContain('amqp://guest:***@127.0.0.1:5672/');

      // an approval the filter accepts: published with the kept credentials (so the broker answers at all), and
      // returned, since no queue is bound: each attempt fails as unroutable, with the broker's reason shown
      const request = await newAccessRequest(app.ID, 'payments-api');
      expect((await portal.put(`/portal-api/access_requests/${request}/approve`, {})).status).toBe(200);
      await page.goto(`${base}/console/#/webhooks/${webhookId}`);
      await refreshUntil('tr[data-status=failed]', 'button:text-is("Refresh")', 30_000);
      await page.locator('tr[data-status=failed] a').click();
      const attempts = page.getByTestId('attempts');
      await attempts.waitFor();
      // (named once the webhook is read, which may come after the delivery)
      await attempts.locator('th', { hasText: "Broker's answer" }).waitFor();
      expect(await attempts.locator('tr[data-attempt]').count()).toBe(2);
      for (const n of [1, 2]) {
        const a = attempts.locator(`tr[data-attempt="${n}"]`);
        expect(await a.getAttribute('data-error')).toBe('unroutable');
        expect(await a.locator('td[data-label="Status code"]').textContent()).toBe('none');
        expect(await a.textContent()).toContain(`no queue is bound to exchange '${nowhere.name}'`);
        expect(await a.textContent()).toContain("routing key 'portal.approvals'");
        expect(await a.locator('[title^="unroutable:"]').count()).toBe(1);
      }
      await shot('delivery-broker');
      // the broker's credentials never reached the API's logs
      expect(apiProcess.output).not.toContain('guest:guest');
    } finally {
      await nowhere.close();
    }
  }, 90_000);

  it('shows names from elsewhere as they are: an unbroken one wraps, a directional override reorders nothing', async () => {
    const long = await portal.post('/portal-api/webhooks', {
      Name: 'N'.repeat(255),
      URL: sink.url('/long'),
      Events: ['AccessRequestApproved'],
    });
    expect(long.status).toBe(201);
    // U+202E would show what follows reversed: `gnp.exe` as `exe.png`, the page's own `(#1)` after it as `(1#)`
    const app = await createApp(portal, { Name: 'report\u202Egnp.exe', UserID: 1 });
    const request = await createAccessRequest(portal, {
      AppID: app.ID,
      Catalogue: 'Payments',
      Plan: 'Gold',
      Products: ['one\u202Eowt', 'three'],
    });
    const tab = await context.newPage();
    try {
      await tab.goto(`${base}/console/`);
      await tab.locator('#token').fill(TOKEN);
      await tab.getByRole('button', { name: 'Sign in' }).click();
      await tab.getByRole('banner').getByRole('link', { name: 'Apps' }).waitFor();
      for (const width of [1280, 390]) {
        await tab.setViewportSize({ width, height: 844 });
        for (const route of [`#/webhooks/${long.body.ID}`, `#/webhooks/${long.body.ID}/edit`, '#/webhooks']) {
          await tab.goto(`${base}/console/${route}`);
          await tab.getByText('N'.repeat(20)).first().waitFor();
          expect([route, width, await tab.evaluate('document.documentElement.scrollWidth')]).toEqual([
            route,
            width,
            width,
          ]);
        }
      }
      await tab.goto(`${base}/console/#/access-requests/${request.ID}`);
      await tab.getByText(`(#${app.ID})`).waitFor();
      const text = await tab.locator('main').innerText();
      expect(text).toContain(`report⟨U+202E⟩gnp.exe (#${app.ID})`);
      expect(text).toContain('one⟨U+202E⟩owt');
      expect(text).not.toContain('\u202E');
    } finally {
      await tab.close();
    }
  });

  it('serves the console and Bull Board with a strict Content-Security-Policy', async () => {
    const http = new HttpClient(base);
    const consolePage = await http.get('/console/');
    expect(consolePage.status).toBe(200);
    const csp = String(consolePage.headers['content-security-policy']);
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("style-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('unsafe-inline');
    expect(consolePage.headers['x-content-type-options']).toBe('nosniff');
    // the bundle has no inline script for the policy to block
    expect(consolePage.text).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(consolePage.headers['cache-control']).toBe('no-cache');
    const asset = /src="(\/console\/assets\/[^"]+\.js)"/.exec(consolePage.text)![1];
    const script = await http.get(asset);
    expect(script.status).toBe(200);
    expect(script.headers['cache-control']).toContain('immutable');
    expect(script.headers['content-security-policy']).toBe(csp);
    // only the bundle's own files are served
    for (const path of ['/console/../package.json', '/console/%2e%2e/package.json', '/console/..%2fpackage.json']) {
      const res = await http.get(path);
      expect(res.status).not.toBe(200);
      expect(res.text).not.toContain('gateway-management');
    }

    const boardPage = await http.get('/queues', { authorization: basic('admin', TEST_SECRETS.ADMIN_SECRET) });
    expect(boardPage.status).toBe(200);
    const boardCsp = String(boardPage.headers['content-security-policy']);
    expect(boardCsp).toContain("script-src 'self'");
    expect(boardCsp).not.toContain('unsafe-inline');
    expect(boardCsp).toMatch(/style-src 'self' 'unsafe-hashes'( 'sha256-[A-Za-z0-9+/=]+')+;/);
    expect(boardCsp).toContain("font-src 'self' data:");

    // what a credential reads is kept by no cache: the portal's answers (its refusals too), the board's page and API
    for (const authorization of [TOKEN, 'not-the-token']) {
      const read = await http.get('/portal-api/webhooks', { authorization });
      expect(read.headers['cache-control']).toBe('no-store');
      expect(read.headers['x-content-type-options']).toBe('nosniff');
    }
    expect(boardPage.headers['cache-control']).toBe('no-store');
    const boardApi = await http.get('/queues/api/queues', { authorization: basic('admin', TEST_SECRETS.ADMIN_SECRET) });
    expect(boardApi.headers['cache-control']).toBe('no-store');
  });

  it('serves Bull Board’s page, styles and fonts itself: nothing they name is on another host', async () => {
    const http = new HttpClient(base).with({ authorization: basic('admin', TEST_SECRETS.ADMIN_SECRET) });
    const boardPage = await http.get('/queues');
    expect(boardPage.status).toBe(200);
    const page = boardPage.text;
    expect(page).toContain('<base href="/queues/"');
    // every address the page names is on this server (relative, or absolute without a host)
    const refs = [...page.matchAll(/\s(?:href|src)="([^"]*)"/g)].map((m) => m[1]);
    expect(refs).toContain('fonts/fonts.css');
    for (const ref of refs) expect(ref).not.toMatch(/^(?:[a-z][a-z0-9+.-]*:)?\/\//i);
    expect(page).not.toContain('googleapis');

    const stylesheets = refs.filter((r) => r.endsWith('.css'));
    expect(stylesheets.length).toBeGreaterThanOrEqual(2);
    const fontFiles = new Set<string>();
    for (const sheet of stylesheets) {
      const css = await http.get(`/queues/${sheet}`);
      expect(css.status).toBe(200);
      expect(String(css.headers['content-type'])).toMatch(/^text\/css/);
      expect(css.text).not.toMatch(/@import|url\(\s*['"]?(?:[a-z][a-z0-9+.-]*:)?\/\//i);
      if (sheet === 'fonts/fonts.css') for (const m of css.text.matchAll(/url\(([^)]+)\)/g)) fontFiles.add(m[1]);
    }
    expect(fontFiles.size).toBeGreaterThan(0);
    const woff2 = [...fontFiles].find((f) => f.endsWith('-latin-400-normal.woff2'))!;
    const font = await http.get(`/queues/fonts/${woff2}`);
    expect(font.status).toBe(200);
    expect(font.headers['content-type']).toBe('font/woff2');
    // only the files the stylesheet names, nothing else from the packages' folders
    for (const other of ['package.json', '..%2Fpackage.json', 'ibm-plex-sans-latin-100-normal.woff2'])
      expect((await http.get(`/queues/fonts/${other}`)).status).toBe(404);
    // behind the same password as the board
    expect((await new HttpClient(base).get(`/queues/fonts/${woff2}`)).status).toBe(401);
  });

  it('keeps Bull Board behind HTTP Basic with the admin secret as the password', async () => {
    const http = new HttpClient(base);
    const without = await http.get('/queues');
    expect(without.status).toBe(401);
    expect(without.headers['www-authenticate']).toMatch(/^Basic realm="queues"/);
    expect((await http.get('/queues', { authorization: basic('admin', 'wrong-password-0123456789') })).status).toBe(
      401,
    );
    expect((await http.get('/queues/api/queues', { authorization: basic('admin', TOKEN) })).status).toBe(401);
    expect((await http.get('/queues/api/queues', { 'admin-auth': TEST_SECRETS.ADMIN_SECRET })).status).toBe(401);
    const api = await http.get('/queues/api/queues', { authorization: basic('ops', TEST_SECRETS.ADMIN_SECRET) });
    expect(api.status).toBe(200);
    expect(JSON.stringify(api.body)).toContain('deliveries');
    expect(apiProcess.output).not.toContain(TEST_SECRETS.ADMIN_SECRET);
    expect(apiProcess.output).not.toContain(Buffer.from(`ops:${TEST_SECRETS.ADMIN_SECRET}`).toString('base64'));

    // another site's page cannot change the queues with the credentials the browser remembers: a form posting
    // JSON as text/plain, or a script's request
    const admin = basic('ops', TEST_SECRETS.ADMIN_SECRET);
    const elsewhere = { authorization: admin, origin: 'https://attacker.example', 'sec-fetch-site': 'cross-site' };
    const forged = await http.send('POST', '/queues/api/queues/deliveries/add', {
      raw: JSON.stringify({ name: 'delivery.send', data: { deliveryId: 'forged' } }),
      headers: { ...elsewhere, 'content-type': 'text/plain' },
    });
    expect(forged.status).toBe(403);
    expect((await http.send('PUT', '/queues/api/queues/deliveries/pause', { headers: elsewhere })).status).toBe(403);
    const asText = await http.send('POST', '/queues/api/queues/deliveries/add', {
      raw: JSON.stringify({ name: 'delivery.send', data: { deliveryId: 'forged' } }),
      headers: { authorization: admin, 'content-type': 'text/plain' },
    });
    expect(asText.status).toBe(415);
    const ownPage = { authorization: admin, origin: base, 'sec-fetch-site': 'same-origin' };
    expect((await http.send('PUT', '/queues/api/queues/deliveries/resume', { headers: ownPage })).status).toBe(200);

    // and it renders in the browser under its policy
    const board = await context.newPage();
    const violations: string[] = [];
    const requested: string[] = [];
    board.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) violations.push(m.text());
    });
    board.on('request', (r) => requested.push(r.url()));
    await board.setExtraHTTPHeaders({ authorization: basic('admin', TEST_SECRETS.ADMIN_SECRET) });
    await board.goto(`${base}/queues`);
    await board.getByText('deliveries').first().waitFor({ timeout: 15_000 });
    // the page's own fonts, from this server
    await board.evaluate('document.fonts.ready');
    expect(
      await board.evaluate(
        `[...document.fonts].some((f) => f.family.replace(/"/g, '') === 'IBM Plex Sans' && f.status === 'loaded')`,
      ),
    ).toBe(true);
    expect(requested.some((u) => /\/queues\/fonts\/[\w.-]+\.woff2$/.test(u))).toBe(true);
    if (SHOTS) await board.screenshot({ path: join(SHOTS, 'console-queues.png') });
    await board.close();
    expect(violations).toEqual([]);
    // no request left the machine: every one went to this server
    expect(requested.length).toBeGreaterThan(3);
    for (const url of requested) expect(new URL(url).origin).toBe(base);
  });
});
