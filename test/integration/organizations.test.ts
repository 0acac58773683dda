/**
 * The administration API (the reference's `projects.yml` and `organizations.yml`) through the real
 * JS SDK (`@langfuse/client` 5.x) with an organization key from `observatory create-org-key`,
 * against `observatory web` and a worker on real PostgreSQL, Redis and the ClickHouse engine:
 * projects created, renamed and deleted (the project's keys refused at once, every analytics row
 * and relational row of it gone after the worker's pass, another project untouched, compared row by
 * row), API keys generated and predefined, memberships of the organization and its projects. Project
 * keys are refused (403) and organization keys read no project data (403).
 */
import { randomBytes } from 'node:crypto';
import { LangfuseClient } from '@langfuse/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api } from '../conformance/env.ts';
import { projectDeletionPass, analyticsRows as rowsOf } from '../fixtures/project-deletion.ts';
import { cli, MODE_ENV, type Project } from '../fixtures/service.ts';
import { type ServiceSuite, startServiceSuite, stopServiceSuite } from '../fixtures/service-suite.ts';
import { newProjectMember } from '../fixtures/ui-client.ts';

let suite: ServiceSuite;
let org: { publicKey: string; secretKey: string };
let bystander: Project;

const hex = (n: number) => randomBytes(n).toString('hex');
const admin = () => new LangfuseClient({ ...org, baseUrl: suite.web.url });
/** The suite.web as `api` calls it with the key pair `k`. */
const server = (k: { publicKey: string; secretKey: string }) => ({
  url: suite.web.url,
  projectId: '',
  publicKey: k.publicKey,
  secretKey: k.secretKey,
});
const asProject = (k: { publicKey: string; secretKey: string }) =>
  new LangfuseClient({ ...k, baseUrl: suite.web.url });

beforeAll(async () => {
  suite = await startServiceSuite({ project: 'bystander', env: MODE_ENV.dual });
  bystander = suite.project;
  const r = await cli(['create-org-key', '--note', 'terraform', '--json'], suite.env);
  expect(r.code, r.stderr).toBe(0);
  org = JSON.parse(r.stdout.trim());
});

afterAll(() => stopServiceSuite(suite));

const analyticsRows = (projectIds: string[]) => rowsOf(suite.ch.client, projectIds);

describe('projects', () => {
  it('creates, renames and deletes a project; its keys stop at once and its data goes with the worker pass', async () => {
    const created = await admin().api.projects.create({
      name: 'tenant-a',
      metadata: { team: 'x' },
      retention: 30,
    });
    expect(created).toEqual({
      id: expect.any(String),
      name: 'tenant-a',
      organization: { id: 'default', name: 'Default organization' },
      metadata: { team: 'x' },
      retentionDays: 30,
    });
    const renamed = await admin().api.projects.update(created.id, { name: 'tenant-a2', retention: 0 });
    expect(renamed).toEqual({ ...created, name: 'tenant-a2', retentionDays: undefined });
    expect(renamed).not.toHaveProperty('retentionDays');
    const listed = (await admin().api.organizations.getOrganizationProjects()).projects;
    expect(listed.map((p) => p.name).sort()).toEqual(['bystander', 'tenant-a2']);

    const key = await admin().api.projects.createApiKey(created.id, { note: 'ingest' });
    expect(key).toEqual({
      id: expect.any(String),
      createdAt: expect.any(String),
      publicKey: expect.stringMatching(/^pk-obs-/),
      secretKey: expect.stringMatching(/^sk-obs-/),
      displaySecretKey: `${key.secretKey.slice(0, 10)}...${key.secretKey.slice(-4)}`,
      note: 'ingest',
    });
    // The project's own key reads its project; traces sent with it land in the analytics store.
    expect((await asProject(key).api.projects.get()).data[0]!.id).toBe(created.id);
    const traceId = hex(16);
    const ingest = await api(server(key), 'POST', '/api/public/ingestion', {
      batch: [
        {
          id: hex(8),
          type: 'trace-create',
          timestamp: new Date().toISOString(),
          body: { id: traceId, name: 't' },
        },
        {
          id: hex(8),
          type: 'span-create',
          timestamp: new Date().toISOString(),
          body: { id: `${traceId}-s`, traceId, name: 's', startTime: new Date().toISOString() },
        },
      ],
    });
    expect(ingest.status).toBe(207);
    const theirs = hex(16);
    await api(server(bystander), 'POST', '/api/public/ingestion', {
      batch: [
        {
          id: hex(8),
          type: 'trace-create',
          timestamp: new Date().toISOString(),
          body: { id: theirs, name: 't' },
        },
      ],
    });
    await expect
      .poll(async () => (await analyticsRows([created.id])).length, { timeout: 20_000 })
      .toBeGreaterThan(1);
    const bystanderRows = await analyticsRows([bystander.projectId]);
    expect(bystanderRows.length).toBeGreaterThan(0);

    const deleted = await admin().api.projects.delete(created.id);
    expect(deleted).toEqual({ success: true, message: expect.stringContaining('deletion') });
    await expect(asProject(key).api.projects.get()).rejects.toMatchObject({ statusCode: 401 });
    await expect(admin().api.projects.update(created.id, { name: 'again' })).rejects.toMatchObject({
      statusCode: 404,
    });
    expect((await admin().api.organizations.getOrganizationProjects()).projects.map((p) => p.name)).toEqual([
      'bystander',
    ]);

    // The worker's pass (run here, as its tick does) removes the data and then the project.
    const removed = await projectDeletionPass(suite.pool, suite.ch.client);
    expect(removed).toEqual([created.id]);
    expect(await analyticsRows([created.id])).toEqual([]);
    expect(await analyticsRows([bystander.projectId])).toEqual(bystanderRows);
    expect((await suite.pool.query('SELECT 1 FROM projects WHERE id = $1', [created.id])).rowCount).toBe(0);
    const audited = await suite.pool.query(
      'SELECT resource_type, action FROM audit_logs WHERE project_id = $1',
      [created.id],
    );
    expect(audited.rows).toEqual([{ resource_type: 'project', action: 'project-deletion' }]);
    expect(await projectDeletionPass(suite.pool, suite.ch.client)).toEqual([]);
  });

  it('API keys: predefined pairs, listing without secrets, revocation; bad bodies named; other organizations not found', async () => {
    const p = await admin().api.projects.create({ name: `keys-${hex(3)}`, retention: 0 });
    const publicKey = `pk-lf-${hex(8)}`;
    const secretKey = `sk-lf-${hex(16)}`;
    const made = await admin().api.projects.createApiKey(p.id, { publicKey, secretKey });
    expect(made).toMatchObject({ publicKey, secretKey });
    expect((await asProject({ publicKey, secretKey }).api.projects.get()).data[0]!.id).toBe(p.id);
    const listed = await admin().api.projects.getApiKeys(p.id);
    expect(listed.apiKeys).toEqual([
      { id: made.id, createdAt: made.createdAt, publicKey, displaySecretKey: made.displaySecretKey },
    ]);
    expect(JSON.stringify(listed)).not.toContain(secretKey);
    for (const [body, field] of [
      [{ publicKey }, 'secretKey'],
      [{ publicKey: 'pk-obs-x', secretKey }, 'publicKey'],
    ] as const) {
      const r = await api(server(org), 'POST', `/api/public/projects/${p.id}/apiKeys`, body);
      expect(r.status).toBe(400);
      expect(JSON.stringify(r.body)).toContain(field);
    }
    const badRetention = await api(server(org), 'POST', '/api/public/projects', {
      name: 'x',
      retention: 2,
    });
    expect(badRetention.status).toBe(400);
    expect(JSON.stringify(badRetention.body)).toContain('retention');

    expect(await admin().api.projects.deleteApiKey(p.id, made.id)).toEqual({ success: true });
    await expect(asProject({ publicKey, secretKey }).api.projects.get()).rejects.toMatchObject({
      statusCode: 401,
    });
    await expect(admin().api.projects.deleteApiKey(p.id, made.id)).rejects.toMatchObject({ statusCode: 404 });

    // Another organization's key sees none of this one's projects.
    await suite.pool.query(
      "INSERT INTO organizations (id, name) VALUES ('other-org', 'Other') ON CONFLICT DO NOTHING",
    );
    const r = await cli(['create-org-key', '--org', 'other-org', '--json'], suite.env);
    const stranger = new LangfuseClient({ ...JSON.parse(r.stdout.trim()), baseUrl: suite.web.url });
    expect((await stranger.api.organizations.getOrganizationProjects()).projects).toEqual([]);
    await expect(stranger.api.projects.getApiKeys(p.id)).rejects.toMatchObject({ statusCode: 404 });
    await expect(stranger.api.projects.delete(p.id)).rejects.toMatchObject({ statusCode: 404 });
    const keys = (await stranger.api.organizations.getOrganizationApiKeys()).apiKeys;
    expect(keys).toHaveLength(1);
    expect((await admin().api.organizations.getOrganizationApiKeys()).apiKeys.map((k) => k.note)).toEqual([
      'terraform',
    ]);
  });

  it('a project key cannot administer, and an organization key reads no project data (403 both)', async () => {
    const r = await api(server(bystander), 'POST', '/api/public/projects', { name: 'sneaky' });
    expect(r.status).toBe(403);
    // A valid key without the right, as the reference answers an organization key on a project route.
    expect((await api(server(org), 'GET', '/api/public/traces')).status).toBe(403);
    expect((await api(server(org), 'GET', '/api/public/projects')).status).toBe(403);
    expect(
      (
        await api(server({ publicKey: 'pk-x', secretKey: 'sk-x' }), 'POST', '/api/public/projects', {
          name: 'x',
        })
      ).status,
    ).toBe(401);
  });
});

describe('memberships', () => {
  it('organization and project memberships with the reference roles; ADMIN and strangers refused', async () => {
    const user = await newProjectMember(suite.env, bystander.projectId, 'viewer');
    const a = admin().api.organizations;
    expect(await a.updateOrganizationMembership({ userId: user.userId, role: 'MEMBER' })).toEqual({
      userId: user.userId,
      role: 'MEMBER',
      email: user.email,
      name: '',
    });
    expect((await a.getOrganizationMemberships()).memberships.map((m) => [m.userId, m.role])).toContainEqual([
      user.userId,
      'MEMBER',
    ]);
    expect(
      await a.updateProjectMembership(bystander.projectId, { userId: user.userId, role: 'OWNER' }),
    ).toMatchObject({
      role: 'OWNER',
    });
    expect((await a.getProjectMemberships(bystander.projectId)).memberships).toEqual([
      { userId: user.userId, role: 'OWNER', email: user.email, name: '' },
    ]);
    const admin400 = await api(server(org), 'PUT', '/api/public/organizations/memberships', {
      userId: user.userId,
      role: 'ADMIN',
    });
    expect(admin400.status).toBe(400);
    expect(JSON.stringify(admin400.body)).toContain('ADMIN');
    await expect(a.updateOrganizationMembership({ userId: 'nobody', role: 'VIEWER' })).rejects.toMatchObject({
      statusCode: 404,
    });

    expect(await a.deleteProjectMembership(bystander.projectId, { userId: user.userId })).toEqual({
      message: 'Membership deleted successfully',
      userId: user.userId,
    });
    expect(await a.deleteOrganizationMembership({ userId: user.userId })).toMatchObject({
      userId: user.userId,
    });
    // Not an organization member any more: no project grant either.
    const notMember = await api(
      server(org),
      'PUT',
      `/api/public/projects/${bystander.projectId}/memberships`,
      {
        userId: user.userId,
        role: 'VIEWER',
      },
    );
    expect(notMember.status).toBe(400);
    expect(JSON.stringify(notMember.body)).toContain('userId');
  });
});
