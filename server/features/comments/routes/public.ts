/**
 * Comments (`/api/public/comments`) on traces, observations, sessions and prompts: create, list,
 * get. Relational data, served in every write mode; the commented object must exist in the key's
 * project. Listing the comments of an observation that
 * is a trace's root also lists the trace's comments (version 4 shows a trace as its root).
 */
import { z } from 'zod';
import { BadRequest, NotFound } from '../../../kernel/errors.ts';
import { familyPlugin, pageResponse, publicMount } from '../../../platform/http/project-routes.ts';
import { q } from '../../../platform/http/route.ts';
import { traceRootedAt } from '../root-observation.ts';
import { type CommentTarget, createCommentRequest, objectType, shownTargets } from '../rules.ts';
import { createComment, findComment, listComments } from '../store.ts';
import { targetExists } from '../targets.ts';

const comment = z.object({
  id: z.string(),
  projectId: z.string(),
  objectType: z.enum(['TRACE', 'OBSERVATION', 'SESSION', 'PROMPT']),
  objectId: z.string(),
  content: z.string(),
  authorUserId: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
});

export const commentsPlugin = familyPlugin(publicMount('/api/public', 'Comments'), (declare, ctx) => {
  declare(
    {
      method: 'POST',
      path: '/comments',
      summary: 'Comment on a trace, observation, session or prompt of the key’s project',
      body: createCommentRequest,
      response: z.object({ id: z.string() }),
    },
    async ({ body, projectId }) => {
      const stores = { pool: ctx.pool, analytics: ctx.analytics, hasEvents: ctx.config.mode.release === '4' };
      if (!(await targetExists(stores, projectId, body))) {
        throw new NotFound(`objectId: no ${body.objectType.toLowerCase()} ${body.objectId} in this project`);
      }
      return { id: (await createComment(ctx.pool, projectId, body)).id };
    },
  );

  declare.listing(
    {
      path: '/comments',
      summary:
        'List comments, newest first; an observation that roots a trace also shows the trace’s comments',
      query: z.object({
        ...q.page(1000, 50),
        objectType: objectType.optional(),
        objectId: z.string().min(1).optional(),
        authorUserId: z.string().optional(),
      }),
      response: pageResponse(comment),
    },
    async ({ query, projectId }, limit, offset) => {
      let targets: CommentTarget[] = [];
      if (query.objectId !== undefined) {
        if (query.objectType === undefined)
          throw new BadRequest('objectType: required when objectId is given');
        const asked = { objectType: query.objectType, objectId: query.objectId };
        // Release 3 has no events table, so no observation roots a trace there.
        const root =
          asked.objectType === 'OBSERVATION' && ctx.config.mode.release === '4'
            ? await traceRootedAt(ctx.analytics, projectId, asked.objectId)
            : undefined;
        targets = shownTargets(asked, root);
      }
      return listComments(
        ctx.pool,
        projectId,
        { targets, objectType: query.objectType, authorUserId: query.authorUserId },
        limit,
        offset,
      );
    },
  );

  declare.lookup(
    { path: '/comments/:commentId', summary: 'Get a comment', response: comment },
    'Comment',
    ({ params, projectId }) => findComment(ctx.pool, projectId, params.commentId),
  );
});
