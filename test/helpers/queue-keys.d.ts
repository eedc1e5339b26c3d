/** Deletes every Redis key under a queue prefix (never FLUSHALL: other tests share the server). */
export function deleteQueueKeys(redisUrl: string, prefix: string): Promise<number>;
