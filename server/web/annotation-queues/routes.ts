/**
 * Annotation queues (`annotation-queues`), the reference's public API declared once and mounted
 * twice: under `/api/public` for the project of the API key, and under `/api/ui/projects/:projectId`
 * for the UI's project scope (writes for members and owners). Queues score with score configs of
 * their project; items name a trace, observation or session (not checked to exist, as the
 * reference: the SDKs may add an object before its ingestion lands); assignees are project
 * members. Another project's ids are a 404. Relational data, served in every write mode.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import {
  annotationQueue,
  annotationQueueItem,
  assignmentRequest,
  createItemRequest,
  createQueueRequest,
  missingConfigIds,
  queueStatus,
  statusChange,
  updateItemRequest,
} from '../../annotation-queues/rules.ts';
import {
  assign,
  createItem,
  createQueue,
  deleteItem,
  findItem,
  findQueue,
  knownConfigIds,
  listItems,
  listQueues,
  projectMembers,
  QueueNameTaken,
  unassign,
  updateItem,
} from '../../annotation-queues/store.ts';
import { BadRequest, NotFound } from '../../errors.ts';
import type { WebContext } from '../core/context.ts';
import {
  offsetOf,
  type ProjectMount,
  paged,
  pageMetaResponse,
  projectRoutes,
} from '../core/project-routes.ts';
import { q } from '../core/route.ts';

const page = { page: q.int(1, 1_000_000, 1), limit: q.int(1, 1000, 50) };

export interface QueueMount extends ProjectMount {
  /** The signed-in reviewer, where the mount has one: recorded on the items they complete. */
  reviewerOf?: (req: FastifyRequest) => string;
}

export function annotationQueueRoutes(app: FastifyInstance, ctx: WebContext, mount: QueueMount): void {
  const declare = projectRoutes(app, mount);
  const queueParams = z.object({ queueId: z.string().min(1) });
  const itemParams = queueParams.extend({ itemId: z.string().min(1) });

  const queueOf = async (projectId: string, queueId: string) => {
    const queue = await findQueue(ctx.pool, projectId, queueId);
    if (!queue) throw new NotFound(`Annotation queue ${queueId} not found`);
    return queue;
  };
  const itemOf = async (projectId: string, queueId: string, itemId: string) => {
    await queueOf(projectId, queueId);
    const item = await findItem(ctx.pool, projectId, queueId, itemId);
    if (!item) throw new NotFound(`Annotation queue item ${itemId} not found`);
    return item;
  };

  declare(
    {
      method: 'GET',
      path: '/annotation-queues',
      summary: 'List annotation queues, newest first',
      query: z.object(page),
      response: z.object({ data: z.array(annotationQueue), meta: pageMetaResponse }),
    },
    async ({ query, projectId }) => {
      const { queues, total } = await listQueues(ctx.pool, projectId, query.limit, offsetOf(query));
      return paged(query, queues, total);
    },
  );

  declare(
    {
      method: 'POST',
      path: '/annotation-queues',
      summary: 'Create an annotation queue scoring with score configs of the project',
      body: createQueueRequest,
      response: annotationQueue,
    },
    async ({ body, projectId }) => {
      const missing = missingConfigIds(
        body.scoreConfigIds,
        await knownConfigIds(ctx.pool, projectId, body.scoreConfigIds),
      );
      if (missing.length > 0) {
        throw new BadRequest(`scoreConfigIds: no score config ${missing.join(', ')} in this project`);
      }
      try {
        return await createQueue(ctx.pool, projectId, body);
      } catch (err) {
        if (err instanceof QueueNameTaken) throw new BadRequest(`name: a queue named ${body.name} exists`);
        throw err;
      }
    },
  );

  declare(
    {
      method: 'GET',
      path: '/annotation-queues/:queueId',
      summary: 'Get an annotation queue',
      params: queueParams,
      response: annotationQueue,
    },
    async ({ params, projectId }) => queueOf(projectId, params.queueId),
  );

  declare(
    {
      method: 'GET',
      path: '/annotation-queues/:queueId/items',
      summary: 'List the items of an annotation queue, newest first, optionally by status',
      params: queueParams,
      query: z.object({ ...page, status: queueStatus.optional() }),
      response: z.object({ data: z.array(annotationQueueItem), meta: pageMetaResponse }),
    },
    async ({ params, query, projectId }) => {
      await queueOf(projectId, params.queueId);
      const { items, total } = await listItems(
        ctx.pool,
        projectId,
        params.queueId,
        query.status,
        query.limit,
        offsetOf(query),
      );
      return paged(query, items, total);
    },
  );

  declare(
    {
      method: 'GET',
      path: '/annotation-queues/:queueId/items/:itemId',
      summary: 'Get an item of an annotation queue',
      params: itemParams,
      response: annotationQueueItem,
    },
    async ({ params, projectId }) => itemOf(projectId, params.queueId, params.itemId),
  );

  declare(
    {
      method: 'POST',
      path: '/annotation-queues/:queueId/items',
      summary: 'Add a trace, observation or session to an annotation queue (PENDING unless told)',
      params: queueParams,
      body: createItemRequest,
      response: annotationQueueItem,
    },
    async ({ params, body, projectId }) => {
      await queueOf(projectId, params.queueId);
      return createItem(ctx.pool, projectId, params.queueId, body);
    },
  );

  declare(
    {
      method: 'PATCH',
      path: '/annotation-queues/:queueId/items/:itemId',
      summary: 'Set the status of an annotation queue item (COMPLETED stamps completedAt)',
      params: itemParams,
      body: updateItemRequest,
      response: annotationQueueItem,
    },
    async ({ params, body, projectId, req }) => {
      const current = await itemOf(projectId, params.queueId, params.itemId);
      const updated = await updateItem(
        ctx.pool,
        projectId,
        params.queueId,
        params.itemId,
        statusChange(current.status, body.status, new Date()),
        mount.reviewerOf?.(req) ?? null,
      );
      if (!updated) throw new NotFound(`Annotation queue item ${params.itemId} not found`);
      return updated;
    },
  );

  declare(
    {
      method: 'DELETE',
      path: '/annotation-queues/:queueId/items/:itemId',
      summary: 'Remove an item from an annotation queue',
      params: itemParams,
      response: z.object({ success: z.boolean(), message: z.string() }),
    },
    async ({ params, projectId }) => {
      await queueOf(projectId, params.queueId);
      if (!(await deleteItem(ctx.pool, projectId, params.queueId, params.itemId))) {
        throw new NotFound(`Annotation queue item ${params.itemId} not found`);
      }
      return { success: true, message: 'Annotation queue item deleted successfully' };
    },
  );

  declare(
    {
      method: 'POST',
      path: '/annotation-queues/:queueId/assignments',
      summary: 'Assign a member of the project to an annotation queue (idempotent)',
      params: queueParams,
      body: assignmentRequest,
      response: z.object({ userId: z.string(), queueId: z.string(), projectId: z.string() }),
    },
    async ({ params, body, projectId }) => {
      await queueOf(projectId, params.queueId);
      if ((await projectMembers(ctx.pool, projectId, body.userId)).length === 0) {
        throw new NotFound(`userId: no user ${body.userId} in this project`);
      }
      await assign(ctx.pool, projectId, params.queueId, body.userId);
      return { userId: body.userId, queueId: params.queueId, projectId };
    },
  );

  declare(
    {
      method: 'DELETE',
      path: '/annotation-queues/:queueId/assignments',
      summary: 'Remove the assignment of a user to an annotation queue (idempotent)',
      params: queueParams,
      body: assignmentRequest,
      response: z.object({ success: z.boolean() }),
    },
    async ({ params, body, projectId }) => {
      await queueOf(projectId, params.queueId);
      await unassign(ctx.pool, projectId, params.queueId, body.userId);
      return { success: true };
    },
  );
}
