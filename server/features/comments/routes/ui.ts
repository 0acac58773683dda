/**
 * A comment the web UI's trace view adds (`/api/ui/projects/:projectId/comments`), authored by the
 * signed-in user through the same service as `POST /api/public/comments`; members and owners.
 */
import { behaviourOf } from '../../../contract/write-modes.ts';
import { NotFound } from '../../../kernel/errors.ts';
import { familyPlugin, uiMount } from '../../../platform/http/project-routes.ts';
import { createCommentRequest } from '../rules.ts';
import { createComment } from '../store.ts';
import { targetExists } from '../targets.ts';

export const uiCommentsPlugin = familyPlugin(uiMount(), (declare, ctx) => {
  declare(
    {
      method: 'POST',
      path: '/comments',
      summary: 'Add a comment, as POST /api/public/comments, authored by the signed-in user',
      role: { atLeast: 'member', refusal: 'viewers cannot add comments' },
      body: createCommentRequest.omit({ projectId: true, authorUserId: true }),
    },
    async ({ body, req, projectId }) => {
      const stores = {
        pool: ctx.pool,
        analytics: ctx.analytics,
        hasEvents: ctx.config.mode.release === '4',
        readLegacy: behaviourOf(ctx.config.mode).servesLegacyEndpoints,
      };
      if (!(await targetExists(stores, projectId, body))) {
        throw new NotFound(`objectId: no ${body.objectType.toLowerCase()} ${body.objectId} in this project`);
      }
      const comment = await createComment(ctx.pool, projectId, {
        ...body,
        authorUserId: req.session.user.id,
      });
      return { id: comment.id };
    },
  );
});
