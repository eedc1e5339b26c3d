import { randomBytes } from 'node:crypto';
import { createServer, IncomingHttpHeaders, Server } from 'node:http';
import { AddressInfo } from 'node:net';

/** ok: registers; fail: HTTP 500; hang: never answers; no-client-id: 201 without a client_id. */
export type IdpMode = 'ok' | 'fail' | 'hang' | 'no-client-id';

export interface IdpRegistration {
  headers: IncomingHttpHeaders;
  body: Record<string, unknown>;
  /** The JSON text the provider answered with ('' when it did not register). */
  reply: string;
}

/** A small RFC 7591 dynamic client registration endpoint on 127.0.0.1 for e2e specs. */
export class FakeIdp {
  mode: IdpMode = 'ok';
  /** client_secret_expires_at of the next replies (0: never). */
  secretExpiresAt = 0;
  /** Members that replace those of the next 'ok' replies (the client is registered all the same). */
  replyWith: Record<string, unknown> = {};
  readonly registrations: IdpRegistration[] = [];
  /** RFC 7592 deletions received: the client id and whether its registration access token matched. */
  readonly deletions: { clientId: string; authorized: boolean }[] = [];
  /**
   * Runs before an 'ok' registration is answered (the client already exists at the provider), so a spec can
   * change the database while the service waits on the provider; a hook that throws answers HTTP 500.
   */
  beforeReply: ((clientId: string) => Promise<void>) | null = null;
  /** Runs when an RFC 7592 deletion arrives, before it is answered, so a spec can see the database at that moment. */
  beforeDelete: ((clientId: string) => Promise<void>) | null = null;
  /** Registration access tokens of the clients that exist, by client id. */
  private readonly clients = new Map<string, string>();

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(): Promise<FakeIdp> {
    let idp: FakeIdp | undefined = undefined;
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () =>
        idp!.answer(req.method ?? '', req.headers, Buffer.concat(chunks).toString('utf8'), res, req.url ?? ''),
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    idp = new FakeIdp(server, `http://127.0.0.1:${port}/register`);
    return idp;
  }

  /** Back to registering, with secrets that never expire and no hooks (useService does it before each test). */
  reset(): void {
    this.mode = 'ok';
    this.secretExpiresAt = 0;
    this.replyWith = {};
    this.beforeReply = null;
    this.beforeDelete = null;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private answer(
    method: string,
    headers: IncomingHttpHeaders,
    text: string,
    res: import('node:http').ServerResponse,
    path = '',
  ): void {
    if (method === 'DELETE') {
      const hook = this.beforeDelete;
      if (!hook) return this.delete(headers, path, res);
      const clientId = decodeURIComponent(path.split('/').pop() ?? '');
      hook(clientId).then(
        () => this.delete(headers, path, res),
        () => res.writeHead(500).end(),
      );
      return;
    }
    const body = text ? (JSON.parse(text) as Record<string, unknown>) : {};
    const record: IdpRegistration = { headers, body, reply: '' };
    this.registrations.push(record);
    if (method !== 'POST') {
      res.writeHead(405).end();
      return;
    }
    switch (this.mode) {
      case 'hang':
        return; // never answers; close() ends the socket
      case 'fail':
        res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":"server_error"}');
        return;
      case 'no-client-id':
        res.writeHead(201, { 'content-type': 'application/json' }).end('{"client_secret":"x"}');
        return;
      case 'ok': {
        const clientId = `client-${randomBytes(6).toString('hex')}`;
        const reply = {
          ...body,
          client_id: clientId,
          client_secret: `idp-secret-${randomBytes(12).toString('hex')}`,
          client_id_issued_at: Math.floor(Date.now() / 1000),
          client_secret_expires_at: this.secretExpiresAt,
          registration_client_uri: `${this.url}/${clientId}`,
          registration_access_token: `idp-rat-${randomBytes(12).toString('hex')}`,
          subject_type: 'public',
          ...this.replyWith,
        };
        this.clients.set(clientId, reply.registration_access_token);
        const send = () => {
          record.reply = JSON.stringify(reply);
          res.writeHead(201, { 'content-type': 'application/json' }).end(record.reply);
        };
        const hook = this.beforeReply;
        if (!hook) return send();
        hook(clientId).then(send, () =>
          res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":"server_error"}'),
        );
      }
    }
  }

  /** RFC 7592 §2.3: 204 when the token matches the client's; 401 otherwise (also for a client that is gone). */
  private delete(headers: IncomingHttpHeaders, path: string, res: import('node:http').ServerResponse): void {
    if (this.mode === 'hang') return;
    const clientId = decodeURIComponent(path.split('/').pop() ?? '');
    const token = this.clients.get(clientId);
    const authorized = token !== undefined && headers.authorization === `Bearer ${token}`;
    this.deletions.push({ clientId, authorized });
    if (!authorized) {
      res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"invalid_token"}');
      return;
    }
    this.clients.delete(clientId);
    res.writeHead(204).end();
  }

  /** Whether a registered client still exists at the provider. */
  has(clientId: string): boolean {
    return this.clients.has(clientId);
  }
}

/**
 * A client whose withdrawal timed out after `timeoutMs`: still registered at the provider, and the service's log
 * names it and the timeout, never its secret or registration access token.
 */
export function expectKeptAndLogged(
  idp: FakeIdp,
  registration: Record<string, string>,
  log: string,
  timeoutMs: number,
): void {
  expect(idp.has(registration.client_id)).toBe(true);
  expect(log).toContain('dynamic client registration could not be withdrawn');
  expect(log).toContain(registration.client_id);
  expect(log).toContain(`the identity provider did not answer within ${timeoutMs} ms`);
  expect(log).not.toContain(registration.registration_access_token);
  expect(log).not.toContain(registration.client_secret);
}
