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
import { pageMeta } from '../../reads/datasets.ts';
import type { WebContext } from '../core/context.ts';
import { q, route } from '../core/route.ts';
import type { RoleNeed } from '../ui-shell/scope.ts';

const meta = z.object({
  page: z.number(),
  limit: z.number(),
  totalItems: z.number(),
  totalPages: z.number(),
});
const page = { page: q.int(1, 1_000_000, 1), limit: q.int(1, 1000, 50) };

export interface QueueMount {
  /** `/api/public` or `/api/ui/projects/:projectId`. */
  prefix: string;
  tag: string;
  projectOf: (req: FastifyRequest) => string;
  /** The least role a write needs, where the mount has roles. */
  write?: RoleNeed;
  /** The signed-in reviewer, where the mount has one: recorded on the items they complete. */
  reviewerOf?: (req: FastifyRequest) => string;
}

export function annotationQueueRoutes(app: FastifyInstance, ctx: WebContext, mount: QueueMount): void {
  const { prefix, tag, projectOf } = mount;
  const write = mount.write ? { role: mount.write } : {};
  const queueParams = z.object({ queueId: z.string().min(1) });
  const itemParams = queueParams.extend({ itemId: z.string().min(1) });

  const queueOf = async (req: FastifyRequest, queueId: string) => {
    const queue = await findQueue(ctx.pool, projectOf(req), queueId);
    if (!queue) throw new NotFound(`Annotation queue ${queueId} not found`);
    return queue;
  };
  const itemOf = async (req: FastifyRequest, queueId: string, itemId: string) => {
    await queueOf(req, queueId);
    const item = await findItem(ctx.pool, projectOf(req), queueId, itemId);
    if (!item) throw new NotFound(`Annotation queue item ${itemId} not found`);
    return item;
  };

  route(
    app,
    {
      method: 'GET',
      url: `${prefix}/annotation-queues`,
      tag,
      summary: 'List annotation queues, newest first',
      query: z.object(page),
      response: z.object({ data: z.array(annotationQueue), meta }),
    },
    async ({ query, req }) => {
      const { queues, total } = await listQueues(
        ctx.pool,
        projectOf(req),
        query.limit,
        (query.page - 1) * query.limit,
      );
      return { data: queues, meta: pageMeta(query.page, query.limit, total) };
    },
  );

  route(
    app,
    {
      method: 'POST',
      url: `${prefix}/annotation-queues`,
      tag,
      summary: 'Create an annotation queue scoring with score configs of the project',
      ...write,
      body: createQueueRequest,
      response: annotationQueue,
    },
    async ({ body, req }) => {
      const projectId = projectOf(req);
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

  route(
    app,
    {
      method: 'GET',
      url: `${prefix}/annotation-queues/:queueId`,
      tag,
      summary: 'Get an annotation queue',
      params: queueParams,
      response: annotationQueue,
    },
    async ({ params, req }) => queueOf(req, params.queueId),
  );

  route(
    app,
    {
      method: 'GET',
      url: `${prefix}/annotation-queues/:queueId/items`,
      tag,
      summary: 'List the items of an annotation queue, newest first, optionally by status',
      params: queueParams,
      query: z.object({ ...page, status: queueStatus.optional() }),
      response: z.object({ data: z.array(annotationQueueItem), meta }),
    },
    async ({ params, query, req }) => {
      await queueOf(req, params.queueId);
      const { items, total } = await listItems(
        ctx.pool,
        projectOf(req),
        params.queueId,
        query.status,
        query.limit,
        (query.page - 1) * query.limit,
      );
      return { data: items, meta: pageMeta(query.page, query.limit, total) };
    },
  );

  route(
    app,
    {
      method: 'GET',
      url: `${prefix}/annotation-queues/:queueId/items/:itemId`,
      tag,
      summary: 'Get an item of an annotation queue',
      params: itemParams,
      response: annotationQueueItem,
    },
    async ({ params, req }) => itemOf(req, params.queueId, params.itemId),
  );

  route(
    app,
    {
      method: 'POST',
      url: `${prefix}/annotation-queues/:queueId/items`,
      tag,
      summary: 'Add a trace, observation or session to an annotation queue (PENDING unless told)',
      ...write,
      params: queueParams,
      body: createItemRequest,
      response: annotationQueueItem,
    },
    async ({ params, body, req }) => {
      await queueOf(req, params.queueId);
      return createItem(ctx.pool, projectOf(req), params.queueId, body);
    },
  );

  route(
    app,
    {
      method: 'PATCH',
      url: `${prefix}/annotation-queues/:queueId/items/:itemId`,
      tag,
      summary: 'Set the status of an annotation queue item (COMPLETED stamps completedAt)',
      ...write,
      params: itemParams,
      body: updateItemRequest,
      response: annotationQueueItem,
    },
    async ({ params, body, req }) => {
      const current = await itemOf(req, params.queueId, params.itemId);
      const updated = await updateItem(
        ctx.pool,
        projectOf(req),
        params.queueId,
        params.itemId,
        statusChange(current.status, body.status, new Date()),
        mount.reviewerOf?.(req) ?? null,
      );
      if (!updated) throw new NotFound(`Annotation queue item ${params.itemId} not found`);
      return updated;
    },
  );

  route(
    app,
    {
      method: 'DELETE',
      url: `${prefix}/annotation-queues/:queueId/items/:itemId`,
      tag,
      summary: 'Remove an item from an annotation queue',
      ...write,
      params: itemParams,
      response: z.object({ success: z.boolean(), message: z.string() }),
    },
    async ({ params, req }) => {
      await queueOf(req, params.queueId);
      if (!(await deleteItem(ctx.pool, projectOf(req), params.queueId, params.itemId))) {
        throw new NotFound(`Annotation queue item ${params.itemId} not found`);
      }
      return { success: true, message: 'Annotation queue item deleted successfully' };
    },
  );

  route(
    app,
    {
      method: 'POST',
      url: `${prefix}/annotation-queues/:queueId/assignments`,
      tag,
      summary: 'Assign a member of the project to an annotation queue (idempotent)',
      ...write,
      params: queueParams,
      body: assignmentRequest,
      response: z.object({ userId: z.string(), queueId: z.string(), projectId: z.string() }),
    },
    async ({ params, body, req }) => {
      const projectId = projectOf(req);
      await queueOf(req, params.queueId);
      if ((await projectMembers(ctx.pool, projectId, body.userId)).length === 0) {
        throw new NotFound(`userId: no user ${body.userId} in this project`);
      }
      await assign(ctx.pool, projectId, params.queueId, body.userId);
      return { userId: body.userId, queueId: params.queueId, projectId };
    },
  );

  route(
    app,
    {
      method: 'DELETE',
      url: `${prefix}/annotation-queues/:queueId/assignments`,
      tag,
      summary: 'Remove the assignment of a user to an annotation queue (idempotent)',
      ...write,
      params: queueParams,
      body: assignmentRequest,
      response: z.object({ success: z.boolean() }),
    },
    async ({ params, body, req }) => {
      await queueOf(req, params.queueId);
      await unassign(ctx.pool, projectOf(req), params.queueId, body.userId);
      return { success: true };
    },
  );
}
