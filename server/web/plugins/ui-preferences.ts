/**
 * The signed-in user's choice of read path (`PUT /api/ui/preferences/v4-preview`): the spec's
 * per-user toggle of the version 4 preview, stored on the user. Refused (409, saying why) where
 * the deployment gives no choice: only `dual` with the preview opt-in lets a user switch.
 */
import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import { readPathOf } from '../../users/read-path.ts';
import { setV4Preview } from '../../users/store.ts';
import { Conflict } from '../errors.ts';
import { route } from '../route.ts';
import { requireUiSession } from '../ui-session.ts';
import type { PluginOptions } from './types.ts';

export const uiPreferencesPlugin: FastifyPluginAsync<PluginOptions> = async (app, { ctx }) => {
  requireUiSession(app, ctx);

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
};
