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
import { BadRequest, NotFound } from '../../../kernel/errors.ts';
import { found, translating, when } from '../../../platform/http/answers.ts';
import type { RouteContext } from '../../../platform/http/context.ts';
import { type ProjectMount, pageResponse, projectRoutes } from '../../../platform/http/project-routes.ts';
import { q } from '../../../platform/http/route.ts';
import { auditAs } from '../../audit/routes/audit.ts';
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
  updateQueueRequest,
} from '../rules.ts';
import {
  assign,
  createItem,
  createQueue,
  deleteItem,
  deleteQueue,
  findItem,
  findQueue,
  knownConfigIds,
  listItems,
  listQueues,
  projectMembers,
  QueueNameTaken,
  unassign,
  updateItem,
  updateQueue,
} from '../store.ts';

const page = q.page(1000, 50);

/** A name the project has already is a 400 naming `name`. */
const nameTaken = (name: string | undefined) =>
  when(QueueNameTaken, () => new BadRequest(`name: a queue named ${name} exists`));

export interface QueueMount extends ProjectMount {
  /** The signed-in reviewer, where the mount has one: recorded on the items they complete. */
  reviewerOf?: (req: FastifyRequest) => string;
  /** Serves changing and deleting a queue (the UI's; the reference's public API has neither). */
  queueChanges?: true;
}

export function annotationQueueRoutes(app: FastifyInstance, ctx: RouteContext, mount: QueueMount): void {
  const declare = projectRoutes(app, mount);
  const queueParams = z.object({ queueId: z.string().min(1) });
  const itemParams = queueParams.extend({ itemId: z.string().min(1) });

  /** 400 naming `scoreConfigIds` unless every id is a score config of the project. */
  const checkConfigs = async (projectId: string, ids: string[]) => {
    const missing = missingConfigIds(ids, await knownConfigIds(ctx.pool, projectId, ids));
    if (missing.length > 0) {
      throw new BadRequest(`scoreConfigIds: no score config ${missing.join(', ')} in this project`);
    }
  };

  const queueOf = async (projectId: string, queueId: string) => {
    return found(await findQueue(ctx.pool, projectId, queueId), 'Annotation queue', queueId);
  };
  const itemOf = async (projectId: string, queueId: string, itemId: string) => {
    await queueOf(projectId, queueId);
    return found(await findItem(ctx.pool, projectId, queueId, itemId), 'Annotation queue item', itemId);
  };
  /** Records a change to an item in the audit log. */
  const auditItem = (req: FastifyRequest, action: 'create' | 'update' | 'delete', itemId: string) =>
    auditAs(ctx, req, { resourceType: 'annotation-queue-item', action, resourceId: itemId });
  /** Records a change to an assignment in the audit log, its id there `<queueId>/<userId>`. */
  const auditAssignment = (
    req: FastifyRequest,
    action: 'create' | 'delete',
    queueId: string,
    userId: string,
  ) =>
    auditAs(ctx, req, {
      resourceType: 'annotation-queue-assignment',
      action,
      resourceId: `${queueId}/${userId}`,
    });

  declare.listing(
    {
      path: '/annotation-queues',
      summary: 'List annotation queues, newest first',
      query: z.object(page),
      response: pageResponse(annotationQueue),
    },
    ({ projectId }, limit, offset) => listQueues(ctx.pool, projectId, limit, offset),
  );

  declare(
    {
      method: 'POST',
      path: '/annotation-queues',
      summary: 'Create an annotation queue scoring with score configs of the project',
      body: createQueueRequest,
      response: annotationQueue,
    },
    async ({ body, projectId, req }) => {
      await checkConfigs(projectId, body.scoreConfigIds);
      const queue = await translating(() => createQueue(ctx.pool, projectId, body), nameTaken(body.name));
      await auditAs(ctx, req, { resourceType: 'annotation-queue', action: 'create', resourceId: queue.id });
      return queue;
    },
  );

  declare.lookup(
    { path: '/annotation-queues/:queueId', summary: 'Get an annotation queue', response: annotationQueue },
    'Annotation queue',
    ({ params, projectId }) => findQueue(ctx.pool, projectId, params.queueId),
  );

  if (mount.queueChanges) {
    declare(
      {
        method: 'PATCH',
        path: '/annotation-queues/:queueId',
        summary: "Change a queue's name, description or score configs (those given)",
        body: updateQueueRequest,
        response: annotationQueue,
      },
      async ({ params, body, projectId, req }) => {
        await queueOf(projectId, params.queueId);
        if (body.scoreConfigIds) await checkConfigs(projectId, body.scoreConfigIds);
        const queue = found(
          await translating(
            () => updateQueue(ctx.pool, projectId, params.queueId, body),
            nameTaken(body.name),
          ),
          'Annotation queue',
          params.queueId,
        );
        await auditAs(ctx, req, { resourceType: 'annotation-queue', action: 'update', resourceId: queue.id });
        return queue;
      },
    );

    declare(
      {
        method: 'DELETE',
        path: '/annotation-queues/:queueId',
        summary: 'Delete a queue with its items and assignments (the scores written stay)',
        response: z.object({ success: z.boolean() }),
      },
      async ({ params, projectId, req }) => {
        found(await deleteQueue(ctx.pool, projectId, params.queueId), 'Annotation queue', params.queueId);
        await auditAs(ctx, req, {
          resourceType: 'annotation-queue',
          action: 'delete',
          resourceId: params.queueId,
        });
        return { success: true };
      },
    );
  }

  declare.listing(
    {
      path: '/annotation-queues/:queueId/items',
      summary: 'List the items of an annotation queue, newest first, optionally by status',
      query: z.object({ ...page, status: queueStatus.optional() }),
      response: pageResponse(annotationQueueItem),
    },
    async ({ params, query, projectId }, limit, offset) => {
      await queueOf(projectId, params.queueId);
      return listItems(ctx.pool, projectId, params.queueId, query.status, limit, offset);
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
      body: createItemRequest,
      response: annotationQueueItem,
    },
    async ({ params, body, projectId, req }) => {
      await queueOf(projectId, params.queueId);
      const item = await createItem(ctx.pool, projectId, params.queueId, body);
      await auditItem(req, 'create', item.id);
      return item;
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
      const updated = found(
        await updateItem(
          ctx.pool,
          projectId,
          params.queueId,
          params.itemId,
          statusChange(current.status, body.status, new Date()),
          mount.reviewerOf?.(req) ?? null,
        ),
        'Annotation queue item',
        params.itemId,
      );
      await auditItem(req, 'update', updated.id);
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
    async ({ params, projectId, req }) => {
      await queueOf(projectId, params.queueId);
      found(
        await deleteItem(ctx.pool, projectId, params.queueId, params.itemId),
        'Annotation queue item',
        params.itemId,
      );
      await auditItem(req, 'delete', params.itemId);
      return { success: true, message: 'Annotation queue item deleted successfully' };
    },
  );

  declare(
    {
      method: 'POST',
      path: '/annotation-queues/:queueId/assignments',
      summary: 'Assign a member of the project to an annotation queue (idempotent)',
      body: assignmentRequest,
      response: z.object({ userId: z.string(), queueId: z.string(), projectId: z.string() }),
    },
    async ({ params, body, projectId, req }) => {
      await queueOf(projectId, params.queueId);
      if ((await projectMembers(ctx.pool, projectId, body.userId)).length === 0) {
        throw new NotFound(`userId: no user ${body.userId} in this project`);
      }
      await assign(ctx.pool, projectId, params.queueId, body.userId);
      await auditAssignment(req, 'create', params.queueId, body.userId);
      return { userId: body.userId, queueId: params.queueId, projectId };
    },
  );

  declare(
    {
      method: 'DELETE',
      path: '/annotation-queues/:queueId/assignments',
      summary: 'Remove the assignment of a user to an annotation queue (idempotent)',
      body: assignmentRequest,
      response: z.object({ success: z.boolean() }),
    },
    async ({ params, body, projectId, req }) => {
      await queueOf(projectId, params.queueId);
      await unassign(ctx.pool, projectId, params.queueId, body.userId);
      await auditAssignment(req, 'delete', params.queueId, body.userId);
      return { success: true };
    },
  );
}
