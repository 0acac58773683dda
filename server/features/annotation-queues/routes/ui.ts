/**
 * The annotation queue pages' routes in the UI's project scope: the public API's queue routes
 * (family.ts) under `/api/ui/projects/:projectId`, writes for members and owners,
 * an item completed here recording its reviewer; plus what only the pages need: each queue's
 * progress, a queue's items in review order with their reviewers, its assignees, the project's
 * members to assign, and a selection added at once, skipping objects already queued.
 */
import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import { found } from '../../../platform/http/answers.ts';
import type { PluginOptions } from '../../../platform/http/plugin-options.ts';
import { projectRoutes, uiMount } from '../../../platform/http/project-routes.ts';
import { audit } from '../../audit/audit.ts';
import { createItemRequest } from '../rules.ts';
import {
  addNewItems,
  assignees,
  findQueue,
  listQueues,
  projectMembers,
  queueProgress,
  reviewItems,
} from '../store.ts';
import { annotationQueueRoutes } from './family.ts';

const WRITE = { atLeast: 'member', refusal: 'viewers cannot change annotation queues' } as const;

/** A queue's review walks at most this many items; the public API pages through any number. */
const REVIEW_LIMIT = 1000;

export const uiAnnotationQueuesPlugin: FastifyPluginAsync<PluginOptions> = async (app, { ctx }) => {
  const declare = projectRoutes(app, uiMount(WRITE));
  annotationQueueRoutes(app, ctx, {
    ...uiMount(WRITE),
    reviewerOf: (req) => req.session.user.id,
    queueChanges: true,
  });

  declare(
    {
      method: 'GET',
      path: '/annotation-queue-overview',
      summary: "The project's annotation queues with their pending and completed counts, and its members",
    },
    async ({ projectId }) => {
      const [{ items: queues }, progress, members] = await Promise.all([
        listQueues(ctx.pool, projectId, 200, 0),
        queueProgress(ctx.pool, projectId),
        projectMembers(ctx.pool, projectId),
      ]);
      return {
        queues: queues.map((q) => ({ ...q, ...(progress.get(q.id) ?? { pending: 0, completed: 0 }) })),
        members,
      };
    },
  );

  declare(
    {
      method: 'POST',
      path: '/annotation-queues/:queueId/selection',
      summary: 'Add picked traces, observations or sessions to a queue; those already in it are skipped',
      body: z.object({
        objects: z
          .array(createItemRequest.pick({ objectId: true, objectType: true }))
          .min(1)
          .max(1000),
      }),
    },
    async ({ params, body, req, projectId }) => {
      found(await findQueue(ctx.pool, projectId, params.queueId), 'Annotation queue', params.queueId);
      const added = await addNewItems(ctx.pool, projectId, params.queueId, body.objects);
      await audit(ctx.pool, {
        projectId,
        actor: { userId: req.session.user.id },
        resourceType: 'annotation-queue-item',
        action: 'create',
        resourceIds: added,
      });
      return { added: added.length, skipped: body.objects.length - added.length };
    },
  );

  declare(
    {
      method: 'GET',
      path: '/annotation-queues/:queueId/review',
      summary: 'A queue with its items in review order (oldest first), their reviewers, and its assignees',
    },
    async ({ params, projectId }) => {
      const queue = found(
        await findQueue(ctx.pool, projectId, params.queueId),
        'Annotation queue',
        params.queueId,
      );
      const [items, assigned, members] = await Promise.all([
        reviewItems(ctx.pool, projectId, queue.id, REVIEW_LIMIT),
        assignees(ctx.pool, projectId, queue.id),
        projectMembers(ctx.pool, projectId),
      ]);
      return { queue, items, assignees: assigned, members };
    },
  );
};
