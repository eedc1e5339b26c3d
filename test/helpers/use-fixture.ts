/** Something a spec starts beside the service (a receiver, a fake provider, a process) and must stop. */
export interface Closable {
  close(): unknown;
}

/** Things a set-up started, closed in the reverse order (the last started, the first closed). */
export class Closer implements Closable {
  private readonly things: Closable[] = [];

  adopt<T extends Closable>(thing: T): T {
    this.things.push(thing);
    return thing;
  }

  async close(): Promise<void> {
    for (const thing of this.things.splice(0).reverse()) await thing.close();
  }
}

/**
 * Registers a beforeAll that runs `start` and an afterAll that closes what it made, and returns a stand-in for it
 * that the describe's hooks and tests read: so a spec's set-up is one line. The stand-in refuses to be read before
 * the beforeAll has run (at describe time nothing is started yet).
 */
export function useFixture<T extends Closable & object>(start: () => Promise<T>): T {
  let made: T | undefined;
  beforeAll(async () => {
    made = await start();
  });
  // beyond a service process's own bound on its stop (SHUTDOWN_TIMEOUT, 60 s), so that a stop running into it says
  // why (ServiceProcess)
  afterAll(async () => {
    await made?.close();
  }, 120_000);
  const need = (key: string | symbol): T => {
    if (made) return made;
    throw new Error(`fixture: ${String(key)} read before its beforeAll ran (read it inside a hook or a test)`);
  };
  return new Proxy({} as T, {
    get: (_, key) => Reflect.get(need(key), key),
    set: (_, key, value) => Reflect.set(need(key), key, value),
    has: (_, key) => Reflect.has(need(key), key),
    // so that `{ ...fixture }` copies its fields
    ownKeys: () => Reflect.ownKeys(need('its keys')),
    getOwnPropertyDescriptor: (_, key) => {
      const d = Reflect.getOwnPropertyDescriptor(need(key), key);
      return d && { ...d, configurable: true };
    },
  });
}

/** A Closer emptied after each test: what a test adopts (a broker target, a service of its own) it need not close. */
export function closeAfterEach(): Closer {
  const closer = new Closer();
  afterEach(() => closer.close());
  return closer;
}
