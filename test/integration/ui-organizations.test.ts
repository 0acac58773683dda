/**
 * Organizations, projects and sessions administered from the web UI's routes, as a browser calls
 * them, against `observatory web` on real PostgreSQL and the ClickHouse engine: organizations
 * created (the creator their owner) and renamed, projects created, renamed and deleted after their
 * name is typed (the administration API's deletion: keys refused at once, data and row removed by
 * the worker's pass), every change audited with its user; refusals for non-owners (403) and other
 * organizations' users (404). The signed-in user's sessions are listed and revoked one by one or
 * all but the current one, and a revoked browser is signed out.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api } from '../conformance/env.ts';
import { projectDeletionPass, analyticsRows as rowsOf } from '../fixtures/project-deletion.ts';
import { createProject, MODE_ENV, type Project } from '../fixtures/service.ts';
import { type ServiceSuite, startServiceSuite, stopServiceSuite } from '../fixtures/service-suite.ts';
import { type Browser, createUiUser, request, send, signIn } from '../fixtures/ui-client.ts';

let suite: ServiceSuite;
let project: Project;
let other: Project;

const hex = (n: number) => randomBytes(n).toString('hex');
const newUser = (args: string[]) => createUiUser(suite.env, `u-${hex(4)}@example.com`, args);
const browserOf = async (args: string[]) => signIn(suite.web.url, await newUser(args));

beforeAll(async () => {
  suite = await startServiceSuite({ project: 'ui-org-a', others: ['ui-org-b'], env: MODE_ENV.dual });
  [project, other] = [suite.project, suite.others[0]!];
});

afterAll(() => stopServiceSuite(suite));

const analyticsRows = (projectId: string) => rowsOf(suite.ch.client, [projectId]);

describe('organizations and projects', () => {
  it('an owner creates and renames an organization, creates, renames and deletes a project in it; all audited', async () => {
    const owner = await newUser(['--role', 'owner', '--project', project.projectId]);
    const b = await signIn(suite.web.url, owner);
    const viewer = await browserOf(['--role', 'viewer', '--project', project.projectId]);
    const stranger = await browserOf(['--role', 'owner', '--project', other.projectId]);

    // Creating an organization is for owners; its creator owns it.
    expect((await send(viewer, 'POST', '/api/ui/organizations', { name: 'nope' })).status).toBe(403);
    const bad = await send(b, 'POST', '/api/ui/organizations', { name: ' ' });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toContain('name');
    const created = await send(b, 'POST', '/api/ui/organizations', { name: 'Acme' });
    expect(created.status).toBe(201);
    const org = created.body.organization;
    expect(org).toEqual({ id: expect.any(String), name: 'Acme', role: 'owner' });
    expect((await send(b, 'GET', '/api/ui/organizations')).body.data).toEqual([org]);
    expect((await send(stranger, 'GET', '/api/ui/organizations')).body.data).toEqual([]);

    // Renaming: owners only; another organization's user does not find it.
    const member = await browserOf(['--role', 'member', '--org', org.id]);
    const orgPath = `/api/ui/organizations/${org.id}`;
    expect((await send(member, 'PUT', orgPath, { name: 'x' })).status).toBe(403);
    expect((await send(stranger, 'PUT', orgPath, { name: 'x' })).status).toBe(404);
    const renamedOrg = await send(b, 'PUT', orgPath, { name: 'Acme Inc' });
    expect(renamedOrg.status).toBe(200);
    expect(renamedOrg.body.organization).toEqual({ ...org, name: 'Acme Inc' });

    // A project in it: the organization's owners create it; its members and strangers cannot.
    expect((await send(member, 'POST', `${orgPath}/projects`, { name: 'x' })).status).toBe(403);
    expect((await send(stranger, 'POST', `${orgPath}/projects`, { name: 'x' })).status).toBe(404);
    const made = await send(b, 'POST', `${orgPath}/projects`, { name: 'shop' });
    expect(made.status).toBe(201);
    const p = made.body.project;
    expect(p).toEqual({
      id: expect.any(String),
      name: 'shop',
      organization: { id: org.id, name: 'Acme Inc' },
      role: 'owner',
      retentionDays: null,
    });
    const projectPath = `/api/ui/projects/${p.id}`;
    expect((await send(member, 'GET', projectPath)).body.project.role).toBe('member');

    // Renaming the project: owners only; other organizations' users do not find it.
    expect((await send(member, 'PUT', projectPath, { name: 'x' })).status).toBe(403);
    expect((await send(stranger, 'PUT', projectPath, { name: 'x' })).status).toBe(404);
    const renamed = await send(b, 'PUT', projectPath, { name: 'shop-eu' });
    expect(renamed.status).toBe(200);
    expect(renamed.body.project.name).toBe('shop-eu');

    // Data in it, through a key made in the UI.
    const key = (await send(b, 'POST', `${projectPath}/api-keys`, { note: 'ingest' })).body;
    const keyed = { url: suite.web.url, projectId: p.id, publicKey: key.publicKey, secretKey: key.secretKey };
    const traceId = hex(16);
    const now = new Date().toISOString();
    const ingest = await api(keyed, 'POST', '/api/public/ingestion', {
      batch: [
        { id: hex(8), type: 'trace-create', timestamp: now, body: { id: traceId, name: 't' } },
        {
          id: hex(8),
          type: 'span-create',
          timestamp: now,
          body: { id: `${traceId}-s`, traceId, name: 's', startTime: now },
        },
      ],
    });
    expect(ingest.status).toBe(207);
    await expect.poll(async () => (await analyticsRows(p.id)).length, { timeout: 20_000 }).toBeGreaterThan(1);
    const othersRows = await analyticsRows(other.projectId);

    // Deleting: owners only, after typing the project's name.
    expect((await send(member, 'DELETE', projectPath, { confirmName: 'shop-eu' })).status).toBe(403);
    expect((await send(stranger, 'DELETE', projectPath, { confirmName: 'shop-eu' })).status).toBe(404);
    const mistyped = await send(b, 'DELETE', projectPath, { confirmName: 'shop' });
    expect(mistyped.status).toBe(400);
    expect(JSON.stringify(mistyped.body)).toContain('confirmName');
    expect((await send(b, 'DELETE', projectPath, { confirmName: 'shop-eu' })).status).toBe(202);
    expect((await api(keyed, 'GET', '/api/public/projects')).status).toBe(401);
    expect((await send(b, 'GET', projectPath)).status).toBe(404);
    expect(
      (await send(b, 'GET', '/api/ui/projects')).body.data.map((x: { id: string }) => x.id),
    ).not.toContain(p.id);

    // The organization cannot go while it holds a project, even one being deleted.
    const early = await send(b, 'DELETE', orgPath, { confirmName: 'Acme Inc' });
    expect(early.status).toBe(409);
    expect(JSON.stringify(early.body)).toContain('projects');

    // The worker's pass (run here, as its tick does) removes the data and then the project.
    const removed = await projectDeletionPass(suite.pool, suite.ch.client);
    expect(removed).toEqual([p.id]);
    expect(await analyticsRows(p.id)).toEqual([]);
    expect(await analyticsRows(other.projectId)).toEqual(othersRows);
    expect((await suite.pool.query('SELECT 1 FROM projects WHERE id = $1', [p.id])).rowCount).toBe(0);

    const audited = await suite.pool.query(
      `SELECT project_id, org_id, user_id, resource_type, resource_id, action FROM audit_logs
        WHERE org_id = $1 OR project_id = $2 ORDER BY created_at, action`,
      [org.id, p.id],
    );
    const by = { user_id: owner.userId };
    expect(audited.rows).toEqual([
      {
        project_id: null,
        org_id: org.id,
        ...by,
        resource_type: 'organization',
        resource_id: org.id,
        action: 'create',
      },
      {
        project_id: null,
        org_id: org.id,
        ...by,
        resource_type: 'organization',
        resource_id: org.id,
        action: 'update',
      },
      {
        project_id: p.id,
        org_id: org.id,
        ...by,
        resource_type: 'project',
        resource_id: p.id,
        action: 'create',
      },
      {
        project_id: p.id,
        org_id: org.id,
        ...by,
        resource_type: 'project',
        resource_id: p.id,
        action: 'update',
      },
      {
        project_id: p.id,
        org_id: org.id,
        ...by,
        resource_type: 'project',
        resource_id: p.id,
        action: 'delete',
      },
      {
        project_id: p.id,
        org_id: null,
        user_id: null,
        resource_type: 'project',
        resource_id: p.id,
        action: 'project-deletion',
      },
    ]);

    // Empty now: its owners delete it after typing its name; memberships go with it; audited.
    expect((await send(member, 'DELETE', orgPath, { confirmName: 'Acme Inc' })).status).toBe(403);
    expect((await send(stranger, 'DELETE', orgPath, { confirmName: 'Acme Inc' })).status).toBe(404);
    const misnamed = await send(b, 'DELETE', orgPath, { confirmName: 'Acme' });
    expect(misnamed.status).toBe(400);
    expect(JSON.stringify(misnamed.body)).toContain('confirmName');
    expect((await send(b, 'DELETE', orgPath, { confirmName: 'Acme Inc' })).status).toBe(200);
    expect((await send(b, 'GET', '/api/ui/organizations')).body.data).toEqual([]);
    expect((await send(b, 'PUT', orgPath, { name: 'back' })).status).toBe(404);
    const left = await suite.pool.query(
      `SELECT (SELECT count(*)::int FROM organizations WHERE id = $1) AS orgs,
              (SELECT count(*)::int FROM organization_memberships WHERE org_id = $1) AS memberships`,
      [org.id],
    );
    expect(left.rows).toEqual([{ orgs: 0, memberships: 0 }]);
    const deletion = await suite.pool.query(
      `SELECT user_id, resource_id FROM audit_logs WHERE org_id = $1 AND resource_type = 'organization' AND action = 'delete'`,
      [org.id],
    );
    expect(deletion.rows).toEqual([{ user_id: owner.userId, resource_id: org.id }]);
  });

  it('a project owner renames and deletes a project of the default organization; members cannot', async () => {
    const doomed = await createProject(suite.env, 'ui-doomed');
    const owner = await browserOf(['--role', 'owner', '--project', doomed.projectId]);
    const member = await browserOf(['--role', 'member', '--project', doomed.projectId]);
    const path = `/api/ui/projects/${doomed.projectId}`;
    expect((await send(member, 'PUT', path, { name: 'x' })).status).toBe(403);
    expect((await send(owner, 'PUT', path, { name: 'ui-doomed-2', extra: 1 })).status).toBe(400);
    expect((await send(owner, 'PUT', path, { name: 'ui-doomed-2' })).status).toBe(200);
    expect((await send(member, 'DELETE', path, { confirmName: 'ui-doomed-2' })).status).toBe(403);
    expect((await send(owner, 'DELETE', path, {})).status).toBe(400);
    expect((await send(owner, 'DELETE', path, { confirmName: 'ui-doomed-2' })).status).toBe(202);
    expect((await send(member, 'GET', path)).status).toBe(404);
    const marked = await suite.pool.query('SELECT deleted_at FROM projects WHERE id = $1', [
      doomed.projectId,
    ]);
    expect(marked.rows[0]?.deleted_at).toBeInstanceOf(Date);
  });

  it("the deployment's default organization is never deleted, even by its owners", async () => {
    const admin = await browserOf(['--role', 'owner']);
    const refused = await send(admin, 'DELETE', '/api/ui/organizations/default', {
      confirmName: 'Default organization',
    });
    expect(refused.status).toBe(400);
    expect(JSON.stringify(refused.body)).toContain('orgId');
    expect((await suite.pool.query(`SELECT 1 FROM organizations WHERE id = 'default'`)).rowCount).toBe(1);
  });
});

describe("the signed-in user's sessions", () => {
  it('lists them without tokens, marks the current one, revokes one and then all others', async () => {
    const u = await newUser(['--role', 'viewer', '--project', project.projectId]);
    const [a, b, c] = [
      await signIn(suite.web.url, u),
      await signIn(suite.web.url, u),
      await signIn(suite.web.url, u),
    ];
    const someoneElse = await browserOf(['--role', 'viewer', '--project', project.projectId]);

    const listed = await send(a, 'GET', '/api/ui/account/sessions');
    expect(listed.status).toBe(200);
    expect(listed.body.data).toHaveLength(3);
    expect(listed.body.data.filter((s: { current: boolean }) => s.current)).toHaveLength(1);
    for (const s of listed.body.data)
      expect(s).toEqual({
        id: expect.any(String),
        createdAt: expect.any(String),
        lastSeenAt: expect.any(String),
        expiresAt: expect.any(String),
        userAgent: expect.any(String),
        ip: expect.any(String),
        current: expect.any(Boolean),
      });
    for (const x of [a, b, c])
      expect(JSON.stringify(listed.body)).not.toContain(x.cookies.get('obs_session'));
    const currentOf = async (x: Browser) =>
      (await send(x, 'GET', '/api/ui/account/sessions')).body.data.find(
        (s: { current: boolean }) => s.current,
      ).id;
    const bId = await currentOf(b);

    // No CSRF token, no revocation; another user's session is not found.
    expect((await request(a, 'DELETE', `/api/ui/account/sessions/${bId}`)).status).toBe(403);
    expect((await send(someoneElse, 'DELETE', `/api/ui/account/sessions/${bId}`)).status).toBe(404);
    expect((await send(b, 'GET', '/api/ui/projects')).status).toBe(200);

    expect((await send(a, 'DELETE', `/api/ui/account/sessions/${bId}`)).status).toBe(200);
    expect((await send(b, 'GET', '/api/ui/projects')).status).toBe(401);
    expect((await send(a, 'GET', '/api/ui/account/sessions')).body.data).toHaveLength(2);

    const others = await send(a, 'DELETE', '/api/ui/account/sessions');
    expect(others.body).toEqual({ revoked: 1 });
    expect((await send(c, 'GET', '/api/ui/projects')).status).toBe(401);
    expect((await send(a, 'GET', '/api/ui/projects')).status).toBe(200);
    expect((await send(someoneElse, 'GET', '/api/ui/projects')).status).toBe(200);
    expect((await send(a, 'GET', '/api/ui/account/sessions')).body.data).toHaveLength(1);
  });
});
