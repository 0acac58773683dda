/**
 * A project's API keys in the UI's project scope, for owners: list (masked secrets only), create
 * (the secret is in that answer and nowhere else, stored as its hash), revoke. A revoked key is
 * refused at once by this process and within the key cache's 30 s by the other web replicas.
 */
import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import { createApiKey, listApiKeys, revokeApiKey } from '../../projects/keys.ts';
import { found } from '../core/answers.ts';
import type { PluginOptions } from '../core/plugin-options.ts';
import { route } from '../core/route.ts';
import { projectParams } from '../ui-shell/scope.ts';

const OWNERS = { atLeast: 'owner', refusal: 'only owners manage API keys' } as const;

export const uiApiKeysPlugin: FastifyPluginAsync<PluginOptions> = async (app, { ctx }) => {
  const keysPath = '/api/ui/projects/:projectId/api-keys';

  route(
    app,
    {
      method: 'GET',
      url: keysPath,
      tag: 'UI',
      summary: "The project's API keys",
      params: projectParams,
      role: OWNERS,
    },
    async ({ req }) => ({ data: await listApiKeys(ctx.pool, req.project.id) }),
  );

  route(
    app,
    {
      method: 'POST',
      url: keysPath,
      tag: 'UI',
      summary: 'A new API key; its secret is shown in this answer only',
      params: projectParams,
      role: OWNERS,
      body: z.strictObject({ note: z.string().trim().max(200).nullish() }),
    },
    async ({ body, req, reply }) => {
      reply.code(201);
      return createApiKey(ctx.pool, req.project.id, body.note || null);
    },
  );

  route(
    app,
    {
      method: 'DELETE',
      url: `${keysPath}/:keyId`,
      tag: 'UI',
      summary: 'Revoke an API key',
      params: projectParams.extend({ keyId: z.string().min(1) }),
      role: OWNERS,
    },
    async ({ params, req }) => {
      const revoked = found(
        await revokeApiKey(ctx.pool, req.project.id, params.keyId),
        'API key',
        params.keyId,
      );
      ctx.keys.forget(revoked);
      return { ok: true };
    },
  );
};
