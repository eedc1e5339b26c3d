'use strict';
const IORedis = require('ioredis');

/** Deletes every Redis key under a queue prefix (never FLUSHALL: other tests share the server). */
async function deleteQueueKeys(redisUrl, prefix) {
  const redis = new IORedis(redisUrl, { maxRetriesPerRequest: null });
  let deleted = 0;
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length) deleted += await redis.del(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
  return deleted;
}

module.exports = { deleteQueueKeys };
