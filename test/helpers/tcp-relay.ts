import { createServer, Server, Socket } from 'node:net';

/**
 * A TCP relay to `target` (host:port), for specs that take a peer away from the service: it forwards both ways
 * until told otherwise.
 */
export class TcpRelay {
  private frozen = false;
  private refusing = false;
  private readonly sockets = new Set<Socket>();
  /** The upstream side of each relayed connection, by its client side. */
  private readonly upstreams = new Map<Socket, Socket>();
  private constructor(private readonly server: Server) {}

  static async start(target: { host: string; port: number }): Promise<TcpRelay> {
    const relay: TcpRelay = new TcpRelay(
      createServer((client) => {
        relay.track(client);
        if (relay.refusing) return void client.destroy();
        if (relay.frozen) return;
        const upstream = relay.track(new Socket());
        upstream.connect(target.port, target.host);
        client.pipe(upstream).pipe(client);
        relay.upstreams.set(client, upstream);
        client.on('close', () => relay.upstreams.delete(client));
      }),
    );
    await new Promise<void>((resolve) => relay.server.listen(0, '127.0.0.1', resolve));
    return relay;
  }

  get port(): number {
    return (this.server.address() as { port: number }).port;
  }

  /** From now on it forwards nothing either way and closes nothing, as a host cut off by the network looks. */
  silence(): void {
    for (const s of this.sockets) {
      s.unpipe();
      s.pause();
    }
  }

  /**
   * From now on its connections carry what the service sends to the server, but none of the server's answers, and
   * close nothing: a statement sent now runs (and commits), and its answer is lost on the way, as a network that
   * fails right after a request left it. Connections opened after are forwarded both ways.
   */
  muteAnswers(): void {
    for (const [client, upstream] of this.upstreams) {
      upstream.unpipe(client);
      upstream.pause();
    }
  }

  /**
   * Cuts its connections, and accepts the ones opened after without ever answering them, as a host that froze (or
   * a server that stopped answering) leaves them.
   */
  freeze(): void {
    this.frozen = true;
    this.cut();
  }

  /**
   * Cuts its connections, and closes the ones opened after as soon as they are accepted, as a server that is
   * restarting leaves them.
   */
  refuse(): void {
    this.refusing = true;
    this.cut();
  }

  /** Forwards again, to new connections; those held while it was frozen are cut. */
  thaw(): void {
    this.frozen = false;
    this.refusing = false;
    this.cut();
  }

  async close(): Promise<void> {
    this.cut();
    await new Promise((resolve) => this.server.close(resolve));
  }

  private cut(): void {
    for (const s of this.sockets) s.destroy();
  }

  private track(s: Socket): Socket {
    this.sockets.add(s);
    s.on('error', () => undefined);
    s.on('close', () => this.sockets.delete(s));
    return s;
  }
}
