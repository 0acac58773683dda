/**
 * HTTP Basic authentication with a project's key pair. The key selects the project: every route
 * under this plugin sees only `request.principal.projectId`, never a project named by the caller.
 */
import type { FastifyInstance } from 'fastify';
import { parseBasicAuth } from '../projects/keys.ts';
import type { WebContext } from './context.ts';

export function requireProjectKey(app: FastifyInstance, ctx: WebContext): void {
  app.decorateRequest('principal', null as never);
  app.addHook('onRequest', async (req, reply) => {
    const creds = parseBasicAuth(req.headers.authorization);
    if (!creds) {
      return reply.code(401).header('www-authenticate', 'Basic realm="observatory"').send({
        message: 'Authentication error: send Authorization: Basic base64(<public key>:<secret key>)',
      });
    }
    // PostgreSQL text cannot hold NUL: refused here, named, instead of failing the key lookup.
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it looks for
    if (/[\u0000-\u001f\u007f]/.test(creds.publicKey + creds.secretKey)) {
      return reply.code(401).header('www-authenticate', 'Basic realm="observatory"').send({
        message:
          'Authentication error: the API key in Authorization contains a control character (such as NUL)',
      });
    }
    const principal = await ctx.keys.verify(creds.publicKey, creds.secretKey);
    if (!principal) return reply.code(401).send({ message: 'Authentication error: invalid API key' });
    req.principal = principal;
  });
}
