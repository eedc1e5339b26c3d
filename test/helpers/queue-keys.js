'use strict';
// Plain JS (used by jest specs, the soak and the bench): reads the built service's Redis helpers.
const { createRedisClient, hashTaggedPrefix, redisTargetFromUrl } = require('../../dist/queue/redis-connection');

/**
 * Deletes every Redis key under a queue prefix (never FLUSHALL: other tests share the server): the service's
 * hash-tagged `{prefix}:*` keys and any `prefix:*` ones, on a single server or on every master of a cluster
 * (`redis-cluster://` URL).
 */
async function deleteQueueKeys(redisUrl, prefix) {
  const redis = createRedisClient(redisTargetFromUrl(redisUrl));
  redis.on('error', () => undefined);
  let deleted = 0;
  try {
    if (redis.isCluster)
      await new Promise((resolve, reject) =>
        redis.status === 'ready' ? resolve() : redis.once('ready', resolve).once('end', reject),
      );
    const nodes = redis.isCluster ? redis.nodes('master') : [redis];
    const tagged = hashTaggedPrefix(prefix);
    const patterns = [...new Set([`${tagged}:*`, `${prefix}:*`])];
    for (const node of nodes) {
      for (const pattern of patterns) {
        let cursor = '0';
        do {
          const [next, keys] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
          cursor = next;
          if (keys.length === 0) continue;
          // hash-tagged keys share one slot: one DEL for the page, as quick as the wipe of a real incident;
          // keys without the tag may sit in different slots, one DEL each
          if (pattern.startsWith(tagged) || !redis.isCluster) deleted += await node.del(...keys);
          else for (const key of keys) deleted += await node.del(key);
        } while (cursor !== '0');
      }
    }
  } finally {
    redis.disconnect();
  }
  return deleted;
}

module.exports = { deleteQueueKeys };
