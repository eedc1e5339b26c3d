import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { familyOf } from '../errors/families';
import { sendFamilyError } from '../errors/family-exception.filter';
import { privateAnswerHeaders } from '../http/page-security';
import { checkPermission, FamilyAuthenticator } from './auth.guard';

/**
 * Authenticates before the body is read: an onRequest hook runs each family's credential check (and a dashboard
 * route's permission), so an anonymous or unentitled caller gets its 401/403 without the server parsing (up to 32 MiB
 * of) what it sent, as the product's own permission check comes before its handlers read a body. The guards still
 * run on every route; this only makes refusal come first.
 */
export function registerAuthenticateFirst(fastify: FastifyInstance, authenticator: FamilyAuthenticator): void {
  fastify.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    const family = familyOf(request.url);
    if (family === 'other') return;
    privateAnswerHeaders(reply);
    // an unknown route stays the family's 404 for everyone, as it was before this check came first
    if (request.is404) return;
    try {
      const user = await authenticator.authenticate(family, request.headers, request.raw);
      if (user) checkPermission(user, request);
    } catch (err) {
      sendFamilyError(request, reply, err);
      return reply;
    }
  });
}
