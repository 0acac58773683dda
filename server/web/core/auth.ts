/**
 * HTTP Basic authentication with a project's key pair. The key selects the project: every route
 * under this plugin sees only `request.principal.projectId`, never a project named by the caller.
 * The administration routes take an organization's key pair instead (`request.organization`):
 * they act on that organization's projects only.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { parseBasicAuth } from '../../projects/keys.ts';
import { type OrganizationPrincipal, verifyOrganizationKey } from '../../projects/organizations.ts';
import type { WebContext } from './context.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The organization of the calling key, on the administration routes. */
    organization: OrganizationPrincipal;
  }
}

/** The request's key pair, or the answer already sent for a missing or malformed one. */
function credentialsOf(req: FastifyRequest, reply: FastifyReply) {
  const creds = parseBasicAuth(req.headers.authorization);
  if (!creds) {
    reply.code(401).header('www-authenticate', 'Basic realm="observatory"').send({
      message: 'Authentication error: send Authorization: Basic base64(<public key>:<secret key>)',
    });
    return undefined;
  }
  // PostgreSQL text cannot hold NUL: refused here, named, instead of failing the key lookup.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it looks for
  if (/[\u0000-\u001f\u007f]/.test(creds.publicKey + creds.secretKey)) {
    reply.code(401).header('www-authenticate', 'Basic realm="observatory"').send({
      message:
        'Authentication error: the API key in Authorization contains a control character (such as NUL)',
    });
    return undefined;
  }
  return creds;
}

export function requireProjectKey(app: FastifyInstance, ctx: WebContext): void {
  app.decorateRequest('principal', null as never);
  app.addHook('onRequest', async (req, reply) => {
    const creds = credentialsOf(req, reply);
    if (!creds) return reply;
    const principal = await ctx.keys.verify(creds.publicKey, creds.secretKey);
    if (!principal) return reply.code(401).send({ message: 'Authentication error: invalid API key' });
    req.principal = principal;
  });
}

export function requireOrganizationKey(app: FastifyInstance, ctx: WebContext): void {
  app.decorateRequest('organization', null as never);
  app.addHook('onRequest', async (req, reply) => {
    const creds = credentialsOf(req, reply);
    if (!creds) return reply;
    const organization = await verifyOrganizationKey(ctx.pool, creds.publicKey, creds.secretKey);
    if (organization) {
      req.organization = organization;
      return;
    }
    // A project's key is a valid key without the right: 403, as the reference.
    const project = await ctx.keys.verify(creds.publicKey, creds.secretKey);
    return project
      ? reply.code(403).send({ message: 'This route requires an organization-scoped API key' })
      : reply.code(401).send({ message: 'Authentication error: invalid API key' });
  });
}
