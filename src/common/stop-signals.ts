/**
 * The signals that stop the service gracefully (main.ts): the app first, then an embedded PostgreSQL. SIGHUP too: a
 * closing terminal sends it to `npm start`, and without a handler Node ends the process on the spot.
 */
export const STOP_SIGNALS: NodeJS.Signals[] = ['SIGTERM', 'SIGINT', 'SIGHUP'];
