/**
 * A project's API keys in the UI's project scope, for owners: list (masked secrets only), create
 * (the secret is in that answer and nowhere else, stored as its hash), revoke. A revoked key is
 * refused at once by this process and within the key cache's 30 s by the other web replicas.
 */
import { z } from 'zod';
import { found } from '../../../platform/http/answers.ts';
import { familyPlugin, uiMount } from '../../../platform/http/project-routes.ts';
import { createApiKey, listApiKeys, revokeApiKey } from '../keys.ts';
import type { ProjectsRouteContext } from './context.ts';

const OWNERS = { atLeast: 'owner', refusal: 'only owners manage API keys' } as const;

export const uiApiKeysPlugin = familyPlugin<ProjectsRouteContext>(uiMount(OWNERS), (declare, ctx) => {
  declare(
    {
      method: 'GET',
      path: '/api-keys',
      summary: "The project's API keys",
      role: OWNERS,
    },
    async ({ projectId }) => ({ data: await listApiKeys(ctx.pool, projectId) }),
  );

  declare(
    {
      method: 'POST',
      path: '/api-keys',
      summary: 'A new API key; its secret is shown in this answer only',
      body: z.strictObject({ note: z.string().trim().max(200).nullish() }),
    },
    async ({ body, reply, projectId }) => {
      reply.code(201);
      return createApiKey(ctx.pool, projectId, body.note || null);
    },
  );

  declare(
    {
      method: 'DELETE',
      path: '/api-keys/:keyId',
      summary: 'Revoke an API key',
    },
    async ({ params, projectId }) => {
      const revoked = found(await revokeApiKey(ctx.pool, projectId, params.keyId), 'API key', params.keyId);
      ctx.keys.forget(revoked);
      return { ok: true };
    },
  );
});
