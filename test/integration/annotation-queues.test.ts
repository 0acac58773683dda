/**
 * Annotation queues against `observatory web` (events_only) on real PostgreSQL and the analytics
 * server: every operation of the reference's public API (`fern/apis/server/definition/
 * annotation-queues.yml`) driven by the JS SDK's generated `annotationQueues` client
 * (`@langfuse/client` 5.x) and by raw HTTP, each answer parsed by the reference's types written
 * out below (strict: no field more, none missing); bad bodies answer 400 naming the field, unknown
 * ids 404, and another project's key sees and changes nothing. The UI mount of the same routes
 * records the reviewer who completes an item, changes and deletes queues, and refuses viewers. Every
 * change is in the audit log with its key or its user.
 */
import { LangfuseClient } from '@langfuse/client';
import pgLib from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { callJson } from '../fixtures/api-client.ts';
import { createProject, MODE_ENV, type Project } from '../fixtures/service.ts';
import { type ServiceSuite, startServiceSuite, stopServiceSuite } from '../fixtures/service-suite.ts';
import { type Browser, createProjectMember, request, signIn } from '../fixtures/ui-client.ts';

// The reference's types (annotation-queues.yml, utils/pagination.yml), field by field.
const datetime = z.iso.datetime({ offset: true });
const status = z.enum(['PENDING', 'COMPLETED']);
const AnnotationQueue = z.strictObject({
  id: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  scoreConfigIds: z.array(z.string()),
  createdAt: datetime,
  updatedAt: datetime,
});
const AnnotationQueueItem = z.strictObject({
  id: z.string(),
  queueId: z.string(),
  objectId: z.string(),
  objectType: z.enum(['TRACE', 'OBSERVATION', 'SESSION']),
  status,
  completedAt: datetime.nullable(),
  createdAt: datetime,
  updatedAt: datetime,
});
const MetaResponse = z.strictObject({
  page: z.number().int(),
  limit: z.number().int(),
  totalItems: z.number().int(),
  totalPages: z.number().int(),
});
const PaginatedAnnotationQueues = z.strictObject({ data: z.array(AnnotationQueue), meta: MetaResponse });
const PaginatedAnnotationQueueItems = z.strictObject({
  data: z.array(AnnotationQueueItem),
  meta: MetaResponse,
});
const DeleteAnnotationQueueItemResponse = z.strictObject({ success: z.boolean(), message: z.string() });
const CreateAnnotationQueueAssignmentResponse = z.strictObject({
  userId: z.string(),
  queueId: z.string(),
  projectId: z.string(),
});
const DeleteAnnotationQueueAssignmentResponse = z.strictObject({ success: z.boolean() });

let suite: ServiceSuite;
let other: Project;
let member: { userId: string; email: string; password: string };
let outsider: { userId: string };
let viewer: { email: string; password: string };
let configId: string;
let db: pgLib.Pool;
let otherConfigId: string;

beforeAll(async () => {
  suite = await startServiceSuite({ project: 'queues', env: MODE_ENV.events_only });
  other = await createProject(suite.env, 'queues-other');
  member = await createProjectMember(suite.env, 'reviewer@example.com', suite.project.projectId, 'member');
  viewer = await createProjectMember(suite.env, 'watcher@example.com', suite.project.projectId, 'viewer');
  outsider = await createProjectMember(suite.env, 'outsider@example.com', other.projectId, 'owner');
  const config = async (p: Project, name: string) =>
    (
      await callJson(`${suite.web.url}/api/public`, p, 'POST', '/score-configs', {
        name,
        dataType: 'NUMERIC',
      })
    ).body['id'] as string;
  [configId, otherConfigId] = await Promise.all([
    config(suite.project, 'accuracy'),
    config(other, 'elsewhere'),
  ]);
  db = new pgLib.Pool({ connectionString: suite.pg.url, max: 1 });
}, 240_000);

afterAll(async () => {
  await db?.end();
  await stopServiceSuite(suite);
});

const call = (method: string, path: string, body?: unknown, as = suite.project) =>
  callJson(`${suite.web.url}/api/public`, as, method, path, body);
const sdk = (p = suite.project) =>
  new LangfuseClient({ publicKey: p.publicKey, secretKey: p.secretKey, baseUrl: suite.web.url }).api
    .annotationQueues;

describe('the JS SDK’s annotationQueues client', () => {
  it('creates, reads, lists, pages and filters queues and items in the reference’s shapes', async () => {
    const queue = AnnotationQueue.parse(
      await sdk().createQueue({ name: 'sdk queue', description: 'from the SDK', scoreConfigIds: [configId] }),
    );
    expect(queue).toMatchObject({
      name: 'sdk queue',
      description: 'from the SDK',
      scoreConfigIds: [configId],
    });
    expect(AnnotationQueue.parse(await sdk().getQueue(queue.id))).toEqual(queue);
    const listed = PaginatedAnnotationQueues.parse(await sdk().listQueues({ limit: 100 }));
    expect(listed.data).toContainEqual(queue);

    const trace = AnnotationQueueItem.parse(
      await sdk().createQueueItem(queue.id, { objectId: 'trace-1', objectType: 'TRACE' }),
    );
    expect(trace).toMatchObject({ queueId: queue.id, status: 'PENDING', completedAt: null });
    const done = AnnotationQueueItem.parse(
      await sdk().createQueueItem(queue.id, {
        objectId: 'obs-1',
        objectType: 'OBSERVATION',
        status: 'COMPLETED',
      }),
    );
    expect(done.completedAt).not.toBeNull();
    AnnotationQueueItem.parse(
      await sdk().createQueueItem(queue.id, { objectId: 's-1', objectType: 'SESSION' }),
    );

    const page1 = PaginatedAnnotationQueueItems.parse(
      await sdk().listQueueItems(queue.id, { limit: 2, page: 1 }),
    );
    expect(page1.meta).toEqual({ page: 1, limit: 2, totalItems: 3, totalPages: 2 });
    expect(page1.data.map((i) => i.objectId)).toEqual(['s-1', 'obs-1']);
    const pending = PaginatedAnnotationQueueItems.parse(
      await sdk().listQueueItems(queue.id, { status: 'PENDING' }),
    );
    expect(pending.data.map((i) => i.objectId).sort()).toEqual(['s-1', 'trace-1']);

    const completed = AnnotationQueueItem.parse(
      await sdk().updateQueueItem(queue.id, trace.id, { status: 'COMPLETED' }),
    );
    expect(completed.status).toBe('COMPLETED');
    expect(Date.parse(completed.completedAt!)).toBeGreaterThanOrEqual(Date.parse(trace.createdAt));
    expect(AnnotationQueueItem.parse(await sdk().getQueueItem(queue.id, trace.id))).toEqual(completed);
    // An empty update leaves the item as it was; reopening clears the completion.
    expect(AnnotationQueueItem.parse(await sdk().updateQueueItem(queue.id, trace.id, {})).status).toBe(
      'COMPLETED',
    );
    const reopened = AnnotationQueueItem.parse(
      await sdk().updateQueueItem(queue.id, trace.id, { status: 'PENDING' }),
    );
    expect(reopened).toMatchObject({ status: 'PENDING', completedAt: null });

    expect(DeleteAnnotationQueueItemResponse.parse(await sdk().deleteQueueItem(queue.id, trace.id))).toEqual({
      success: true,
      message: 'Annotation queue item deleted successfully',
    });
    expect((await call('GET', `/annotation-queues/${queue.id}/items/${trace.id}`)).status).toBe(404);
  });

  it('assigns a member of the project, idempotently, and removes the assignment, idempotently', async () => {
    const queue = await sdk().createQueue({ name: 'assigned', scoreConfigIds: [configId] });
    for (let i = 0; i < 2; i++) {
      expect(
        CreateAnnotationQueueAssignmentResponse.parse(
          await sdk().createQueueAssignment(queue.id, { userId: member.userId }),
        ),
      ).toEqual({ userId: member.userId, queueId: queue.id, projectId: suite.project.projectId });
    }
    for (let i = 0; i < 2; i++) {
      expect(
        DeleteAnnotationQueueAssignmentResponse.parse(
          await sdk().deleteQueueAssignment(queue.id, { userId: member.userId }),
        ),
      ).toEqual({ success: true });
    }
    const outside = await call('POST', `/annotation-queues/${queue.id}/assignments`, {
      userId: outsider.userId,
    });
    expect(outside.status).toBe(404);
    expect(outside.body['message']).toMatch(/^userId: /);
  });
});

describe('errors', () => {
  it('a bad body answers 400 naming the field', async () => {
    const cases: [string, string, unknown, RegExp][] = [
      ['POST', '/annotation-queues', { scoreConfigIds: [configId] }, /name/],
      ['POST', '/annotation-queues', { name: 'no configs' }, /scoreConfigIds/],
      ['POST', '/annotation-queues', { name: 'empty configs', scoreConfigIds: [] }, /scoreConfigIds/],
      ['POST', '/annotation-queues', { name: 'unknown', scoreConfigIds: ['nope'] }, /scoreConfigIds: .*nope/],
      // Another project's score config is unknown here.
      ['POST', '/annotation-queues', { name: 'foreign', scoreConfigIds: [otherConfigId] }, /scoreConfigIds/],
    ];
    const queue = await sdk().createQueue({ name: 'validated', scoreConfigIds: [configId] });
    const item = await sdk().createQueueItem(queue.id, { objectId: 't', objectType: 'TRACE' });
    cases.push(
      ['POST', '/annotation-queues', { name: 'validated', scoreConfigIds: [configId] }, /name: .*exists/],
      ['POST', `/annotation-queues/${queue.id}/items`, { objectId: 't', objectType: 'PROMPT' }, /objectType/],
      ['POST', `/annotation-queues/${queue.id}/items`, { objectType: 'TRACE' }, /objectId/],
      ['PATCH', `/annotation-queues/${queue.id}/items/${item.id}`, { status: 'DONE' }, /status/],
      ['POST', `/annotation-queues/${queue.id}/assignments`, {}, /userId/],
      ['GET', `/annotation-queues/${queue.id}/items?status=DONE`, undefined, /status/],
      ['GET', '/annotation-queues?page=0', undefined, /page/],
    );
    for (const [method, path, body, field] of cases) {
      const res = await call(method, path, body);
      expect(res.status, `${method} ${path}: ${res.text}`).toBe(400);
      expect(`${res.body['message']} ${res.body['error'] ?? ''}`, `${method} ${path}`).toMatch(field);
    }
  });

  it('unknown ids answer 404, and so do another project’s', async () => {
    const queue = await sdk().createQueue({ name: 'private', scoreConfigIds: [configId] });
    const item = await sdk().createQueueItem(queue.id, { objectId: 't', objectType: 'TRACE' });
    const theirs = await sdk(other).createQueue({ name: 'theirs', scoreConfigIds: [otherConfigId] });
    const requests: [string, string, unknown][] = [
      ['GET', `/annotation-queues/${queue.id}`, undefined],
      ['GET', `/annotation-queues/${queue.id}/items`, undefined],
      ['POST', `/annotation-queues/${queue.id}/items`, { objectId: 'x', objectType: 'TRACE' }],
      ['GET', `/annotation-queues/${queue.id}/items/${item.id}`, undefined],
      ['PATCH', `/annotation-queues/${queue.id}/items/${item.id}`, { status: 'COMPLETED' }],
      ['DELETE', `/annotation-queues/${queue.id}/items/${item.id}`, undefined],
      ['POST', `/annotation-queues/${queue.id}/assignments`, { userId: member.userId }],
      ['DELETE', `/annotation-queues/${queue.id}/assignments`, { userId: member.userId }],
    ];
    for (const [method, path, body] of requests) {
      const res = await call(method, path, body, other);
      expect(res.status, `${method} ${path} with the other project's key`).toBe(404);
      const unknown = await call(method, path.replace(queue.id, 'no-such-queue'), body);
      expect(unknown.status, `${method} ${path} of an unknown queue`).toBe(404);
    }
    // An item id of one queue is unknown under another queue of the same project.
    const second = await sdk().createQueue({ name: 'second', scoreConfigIds: [configId] });
    expect((await call('GET', `/annotation-queues/${second.id}/items/${item.id}`)).status).toBe(404);
    expect((await call('GET', `/annotation-queues/${queue.id}/items/no-such-item`)).status).toBe(404);
    // Nothing of the other project changed and none of it is listed here.
    expect(
      (await call('GET', '/annotation-queues?limit=100')).body['data'].map((q: { id: string }) => q.id),
    ).not.toContain(theirs.id);
    expect(AnnotationQueueItem.parse(await sdk().getQueueItem(queue.id, item.id)).status).toBe('PENDING');
  });
});

describe('the UI mount', () => {
  let reviewer: Browser;
  let watcher: Browser;
  beforeAll(async () => {
    [reviewer, watcher] = await Promise.all([signIn(suite.web.url, member), signIn(suite.web.url, viewer)]);
  });
  const ui = (b: Browser, method: string, path: string, body?: unknown) =>
    request(b, method, `/api/ui/projects/${suite.project.projectId}${path}`, {
      ...(body === undefined ? {} : { body }),
      headers: { 'x-csrf-token': b.csrf },
    });

  it('records who completed an item, shows progress, and refuses viewers’ writes', async () => {
    const created = await ui(reviewer, 'POST', '/annotation-queues', {
      name: 'ui queue',
      scoreConfigIds: [configId],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const queueId = created.body['id'] as string;
    const item = await ui(reviewer, 'POST', `/annotation-queues/${queueId}/items`, {
      objectId: 'ui-trace',
      objectType: 'TRACE',
    });
    expect(item.status).toBe(200);
    expect(
      (
        await ui(watcher, 'PATCH', `/annotation-queues/${queueId}/items/${item.body['id']}`, {
          status: 'COMPLETED',
        })
      ).status,
    ).toBe(403);
    const done = await ui(reviewer, 'PATCH', `/annotation-queues/${queueId}/items/${item.body['id']}`, {
      status: 'COMPLETED',
    });
    expect(done.status).toBe(200);
    const review = await ui(watcher, 'GET', `/annotation-queues/${queueId}/review`);
    expect(review.body['items']).toMatchObject([
      { objectId: 'ui-trace', status: 'COMPLETED', annotatorEmail: 'reviewer@example.com' },
    ]);
    expect(review.body['members'].map((m: { email: string }) => m.email)).toEqual([
      'reviewer@example.com',
      'watcher@example.com',
    ]);
    const overview = await ui(watcher, 'GET', '/annotation-queue-overview');
    expect(overview.body['queues']).toContainEqual(
      expect.objectContaining({ id: queueId, pending: 0, completed: 1 }),
    );
    // A selection from a table adds, in its order, only the objects not queued yet.
    const selection = [
      { objectType: 'SESSION', objectId: 'ui-session' },
      { objectType: 'TRACE', objectId: 'ui-trace' },
      { objectType: 'OBSERVATION', objectId: 'ui-trace' },
      { objectType: 'SESSION', objectId: 'ui-session' },
    ];
    const picked = await ui(reviewer, 'POST', `/annotation-queues/${queueId}/selection`, {
      objects: selection,
    });
    expect(picked.body).toEqual({ added: 2, skipped: 2 });
    const walked = await ui(reviewer, 'GET', `/annotation-queues/${queueId}/review`);
    expect(walked.body['items'].map((i: { objectType: string }) => i.objectType)).toEqual([
      'TRACE',
      'SESSION',
      'OBSERVATION',
    ]);
    expect(
      (await ui(watcher, 'POST', `/annotation-queues/${queueId}/selection`, { objects: selection })).status,
    ).toBe(403);
    const bad = await ui(reviewer, 'POST', `/annotation-queues/${queueId}/selection`, { objects: [] });
    expect(bad.status).toBe(400);
    expect(bad.body['error']).toMatch(/objects/);
    // The other project's queues are not reachable through this project's path.
    const theirs = await sdk(other).createQueue({ name: 'ui theirs', scoreConfigIds: [otherConfigId] });
    expect((await ui(reviewer, 'GET', `/annotation-queues/${theirs.id}/review`)).status).toBe(404);
  });
});

/** The audit log's rows of one resource, oldest first, with the key or the user of each. */
async function audited(resourceIds: string[]) {
  const { rows } = await db.query(
    `SELECT a.resource_type, a.resource_id, a.action, k.public_key, u.email
       FROM audit_logs a LEFT JOIN api_keys k ON k.id = a.api_key_id LEFT JOIN users u ON u.id = a.user_id
      WHERE a.project_id = $1 AND a.resource_id = ANY($2) ORDER BY a.created_at, a.resource_type`,
    [suite.project.projectId, resourceIds],
  );
  return rows.map((r) => [r.resource_type, r.resource_id, r.action, r.public_key ?? r.email]);
}

describe('the audit log', () => {
  it('records every change through the API with its key, and nothing for reads or refusals', async () => {
    const queue = await sdk().createQueue({ name: 'audited', scoreConfigIds: [configId] });
    const item = await sdk().createQueueItem(queue.id, { objectId: 'a-trace', objectType: 'TRACE' });
    await sdk().getQueue(queue.id);
    await sdk().listQueueItems(queue.id);
    await sdk().updateQueueItem(queue.id, item.id, { status: 'COMPLETED' });
    await sdk().createQueueAssignment(queue.id, { userId: member.userId });
    await sdk().deleteQueueAssignment(queue.id, { userId: member.userId });
    await sdk().deleteQueueItem(queue.id, item.id);
    expect((await call('DELETE', `/annotation-queues/${queue.id}/items/${item.id}`)).status).toBe(404);
    const key = suite.project.publicKey;
    const assignment = `${queue.id}/${member.userId}`;
    expect(await audited([queue.id, item.id, assignment])).toEqual([
      ['annotation-queue', queue.id, 'create', key],
      ['annotation-queue-item', item.id, 'create', key],
      ['annotation-queue-item', item.id, 'update', key],
      ['annotation-queue-assignment', assignment, 'create', key],
      ['annotation-queue-assignment', assignment, 'delete', key],
      ['annotation-queue-item', item.id, 'delete', key],
    ]);
  });

  it('records the changes made in the UI with the signed-in user: a queue renamed, its configs changed, deleted', async () => {
    const [reviewer, watcher] = await Promise.all([
      signIn(suite.web.url, member),
      signIn(suite.web.url, viewer),
    ]);
    const ui = (b: Browser, method: string, path: string, body?: unknown) =>
      request(b, method, `/api/ui/projects/${suite.project.projectId}${path}`, {
        ...(body === undefined ? {} : { body }),
        headers: { 'x-csrf-token': b.csrf },
      });
    const second = await call('POST', '/score-configs', { name: 'fluency', dataType: 'NUMERIC' });
    const created = await ui(reviewer, 'POST', '/annotation-queues', {
      name: 'to change',
      scoreConfigIds: [configId],
    });
    const queueId = created.body['id'] as string;
    const picked = await ui(reviewer, 'POST', `/annotation-queues/${queueId}/selection`, {
      objects: [{ objectType: 'TRACE', objectId: 'picked' }],
    });
    expect(picked.body).toEqual({ added: 1, skipped: 0 });
    const changed = await ui(reviewer, 'PATCH', `/annotation-queues/${queueId}`, {
      name: 'changed',
      scoreConfigIds: [configId, second.body['id']],
    });
    expect(changed.status, JSON.stringify(changed.body)).toBe(200);
    expect(AnnotationQueue.parse(changed.body)).toMatchObject({
      name: 'changed',
      description: null,
      scoreConfigIds: [configId, second.body['id']],
    });
    expect(await sdk().getQueue(queueId)).toEqual(changed.body);
    for (const [body, field] of [
      [{}, /At least one/],
      [{ scoreConfigIds: ['nope'] }, /scoreConfigIds: .*nope/],
      [{ scoreConfigIds: [otherConfigId] }, /scoreConfigIds/],
      [{ name: 'audited' }, /name: .*exists/],
    ] as const) {
      const bad = await ui(reviewer, 'PATCH', `/annotation-queues/${queueId}`, body);
      expect(bad.status, JSON.stringify(body)).toBe(400);
      expect(`${bad.body['message']} ${bad.body['error'] ?? ''}`).toMatch(field);
    }
    expect((await ui(watcher, 'PATCH', `/annotation-queues/${queueId}`, { name: 'x' })).status).toBe(403);
    expect((await ui(watcher, 'DELETE', `/annotation-queues/${queueId}`)).status).toBe(403);
    // The public API keeps the reference's operations: no queue change or deletion there.
    expect((await call('DELETE', `/annotation-queues/${queueId}`)).status).toBe(405);

    const items = (await sdk().listQueueItems(queueId)).data.map((i) => i.id);
    expect((await ui(reviewer, 'DELETE', `/annotation-queues/${queueId}`)).body).toEqual({ success: true });
    expect((await ui(reviewer, 'DELETE', `/annotation-queues/${queueId}`)).status).toBe(404);
    expect((await call('GET', `/annotation-queues/${queueId}`)).status).toBe(404);
    const left = await db.query('SELECT count(*)::int AS n FROM annotation_queue_items WHERE queue_id = $1', [
      queueId,
    ]);
    expect(left.rows[0].n).toBe(0);

    const by = member.email;
    expect(await audited([queueId, ...items])).toEqual([
      ['annotation-queue', queueId, 'create', by],
      ['annotation-queue-item', items[0], 'create', by],
      ['annotation-queue', queueId, 'update', by],
      ['annotation-queue', queueId, 'delete', by],
    ]);
  });
});
