/**
 * The signed-in user's own routes: the user's projects (`GET /api/ui/projects`), the user's
 * sessions (`/api/ui/account/sessions`: listed, one revoked, or all but this one), and the choice of
 * read path (`PUT /api/ui/preferences/v4-preview`): the spec's
 * per-user toggle of the version 4 preview, stored on the user. Refused (409, saying why) where
 * the deployment gives no choice: only `dual` with the preview opt-in lets a user switch.
 */
import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import { readPathOf } from '../../../features/users/read-path.ts';
import { revokeOtherSessions, revokeSession, sessionsOf } from '../../../features/users/sessions.ts';
import { projectsOf, setV4Preview } from '../../../features/users/store.ts';
import { Conflict } from '../../../kernel/errors.ts';
import { found } from '../../../platform/http/answers.ts';
import type { PluginOptions } from '../../../platform/http/plugin-options.ts';
import { route } from '../../../platform/http/route.ts';
import type { WebContext } from '../core/context.ts';

export const uiAccountPlugin: FastifyPluginAsync<PluginOptions<WebContext>> = async (app, { ctx }) => {
  route(
    app,
    { method: 'GET', url: '/api/ui/projects', tag: 'UI', summary: "The signed-in user's projects" },
    async ({ req }) => ({ data: await projectsOf(ctx.pool, req.session.user.id) }),
  );

  route(
    app,
    {
      method: 'PUT',
      url: '/api/ui/preferences/v4-preview',
      tag: 'UI',
      summary: "Turn the signed-in user's version 4 preview on or off",
      body: z.object({ enabled: z.boolean() }),
    },
    async ({ body, req }) => {
      const choice = readPathOf(ctx.config.mode, body.enabled);
      if (!choice.canToggle) throw new Conflict(`enabled: the read path is fixed: ${choice.fixedBecause}`);
      await setV4Preview(ctx.pool, req.session.user.id, body.enabled);
      return { readPath: choice };
    },
  );

  const sessionsUrl = '/api/ui/account/sessions';
  route(
    app,
    { method: 'GET', url: sessionsUrl, tag: 'UI', summary: "The signed-in user's active sessions" },
    async ({ req }) => ({ data: await sessionsOf(ctx.pool, req.session.user.id, req.session.id) }),
  );

  route(
    app,
    {
      method: 'DELETE',
      url: sessionsUrl,
      tag: 'UI',
      summary: 'Sign out every other session of the signed-in user',
    },
    async ({ req }) => ({
      revoked: await revokeOtherSessions(ctx.pool, req.session.user.id, req.session.id),
    }),
  );

  route(
    app,
    {
      method: 'DELETE',
      url: `${sessionsUrl}/:sessionId`,
      tag: 'UI',
      summary: 'Sign out one session of the signed-in user',
      params: z.object({ sessionId: z.string().min(1).max(100) }),
    },
    async ({ params, req }) => {
      found(
        await revokeSession(ctx.pool, req.session.user.id, params.sessionId),
        'session',
        params.sessionId,
      );
      return { ok: true };
    },
  );
};
