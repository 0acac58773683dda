/**
 * HTTP Basic authentication with a project's key pair. The key selects the project: every route
 * under this plugin sees only `request.principal.projectId`, never a project named by the caller.
 * The administration routes take an organization's key pair instead (`request.organization`):
 * they act on that organization's projects only.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { parseBasicAuth } from '../../../features/projects/keys.ts';
import {
  type OrganizationPrincipal,
  verifyOrganizationKey,
} from '../../../features/projects/organizations.ts';
import { Forbidden, Unauthorized } from '../../../kernel/errors.ts';
import type { WebContext } from './context.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The organization of the calling key, on the administration routes. */
    organization: OrganizationPrincipal;
  }
}

const BASIC = 'Basic realm="observatory"';

/**
 * The request's key pair, or the 401 of a missing or malformed one. Refusals are thrown, so that
 * each route's error handler shapes them (the unstable routes answer their envelope).
 */
function credentialsOf(req: FastifyRequest, reply: FastifyReply) {
  const creds = parseBasicAuth(req.headers.authorization);
  if (!creds) {
    reply.header('www-authenticate', BASIC);
    throw new Unauthorized(
      'Authentication error: send Authorization: Basic base64(<public key>:<secret key>)',
    );
  }
  // PostgreSQL text cannot hold NUL: refused here, named, instead of failing the key lookup.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it looks for
  if (/[\u0000-\u001f\u007f]/.test(creds.publicKey + creds.secretKey)) {
    reply.header('www-authenticate', BASIC);
    throw new Unauthorized(
      'Authentication error: the API key in Authorization contains a control character (such as NUL)',
    );
  }
  return creds;
}

const INVALID_KEY = 'Authentication error: invalid API key';

export function requireProjectKey(app: FastifyInstance, ctx: WebContext): void {
  app.decorateRequest('principal', null as never);
  app.addHook('onRequest', async (req, reply) => {
    const creds = credentialsOf(req, reply);
    const principal = await ctx.keys.verify(creds.publicKey, creds.secretKey);
    if (principal) {
      req.principal = principal;
      return;
    }
    // An organization's key is a valid key without the right to a project's data: 403, as the reference.
    if (await verifyOrganizationKey(ctx.pool, creds.publicKey, creds.secretKey))
      throw new Forbidden('This route requires a project-scoped API key; this is an organization key');
    throw new Unauthorized(INVALID_KEY);
  });
}

export function requireOrganizationKey(app: FastifyInstance, ctx: WebContext): void {
  app.decorateRequest('organization', null as never);
  app.addHook('onRequest', async (req, reply) => {
    const creds = credentialsOf(req, reply);
    const organization = await verifyOrganizationKey(ctx.pool, creds.publicKey, creds.secretKey);
    if (organization) {
      req.organization = organization;
      return;
    }
    // A project's key is a valid key without the right: 403, as the reference.
    if (await ctx.keys.verify(creds.publicKey, creds.secretKey))
      throw new Forbidden('This route requires an organization-scoped API key');
    throw new Unauthorized(INVALID_KEY);
  });
}
