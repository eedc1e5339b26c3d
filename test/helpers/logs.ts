import { Logger } from '@nestjs/common';

/**
 * Runs `call` with the service's Nest log lines at `levels` kept instead of printed: its result, and those lines as
 * JSON (for what a line must or must not say).
 */
export async function withLogs<T>(
  call: () => Promise<T>,
  levels: ('log' | 'warn' | 'error')[] = ['log', 'warn', 'error'],
): Promise<{ result: T; log: string }> {
  const logged: unknown[] = [];
  const spies = levels.map((level) =>
    jest.spyOn(Logger.prototype, level).mockImplementation(function (this: Logger, ...args: unknown[]) {
      logged.push(args);
    }),
  );
  try {
    const result = await call();
    return { result, log: JSON.stringify(logged) };
  } finally {
    spies.forEach((spy) => spy.mockRestore());
  }
}
