/**
 * A gRPC call's project: the `authorization` metadata holds `Basic base64(public:secret)`, the
 * project's key pair, as on the HTTP API (app/web/core/auth.ts); the key alone selects the project.
 */

import { type Principal, parseBasicAuth } from '../../../features/projects/keys.ts';
import { verifyOrganizationKey } from '../../../features/projects/organizations.ts';
import { Forbidden, Unauthorized } from '../../../kernel/errors.ts';
import type { WebContext } from '../core/context.ts';

export async function authenticate(ctx: WebContext, authorization: string | undefined): Promise<Principal> {
  const creds = parseBasicAuth(authorization);
  // PostgreSQL text cannot hold NUL: refused here, named, instead of failing the key lookup.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it looks for
  if (!creds || /[\u0000-\u001f\u007f]/.test(creds.publicKey + creds.secretKey))
    throw new Unauthorized(
      'Authentication error: send the metadata authorization: Basic base64(<public key>:<secret key>)',
    );
  const principal = await ctx.keys.verify(creds.publicKey, creds.secretKey);
  if (principal) return principal;
  if (await verifyOrganizationKey(ctx.pool, creds.publicKey, creds.secretKey))
    throw new Forbidden('OTLP export requires a project-scoped API key; this is an organization key');
  throw new Unauthorized('Authentication error: invalid API key');
}
