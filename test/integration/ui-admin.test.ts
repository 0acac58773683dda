/**
 * Administration of a project through the web UI's routes, as a browser calls them, against
 * `observatory web` on real PostgreSQL and the ClickHouse engine: API keys (listed masked, created
 * with the secret shown once and working with the real SDK, revoked and refused at once), and
 * people (one-time invitation links for new and existing accounts, roles, removal, and the last
 * owner kept). Every refusal is checked for who gets it: members, viewers, other projects' owners.
 */
import { randomBytes } from 'node:crypto';
import { LangfuseClient } from '@langfuse/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MODE_ENV, type Project } from '../fixtures/service.ts';
import { type ServiceSuite, startServiceSuite, stopServiceSuite } from '../fixtures/service-suite.ts';
import { type Browser, newProjectMember, openBrowser, request, send, signIn } from '../fixtures/ui-client.ts';

let suite: ServiceSuite;
let project: Project;
let other: Project;
let owner: Browser;
let stranger: Browser;

const hex = (n: number) => randomBytes(n).toString('hex');
const user = async (role: string, p: Project = project) => {
  const u = await newProjectMember(suite.env, p.projectId, role);
  return { ...u, browser: await signIn(suite.web.url, u) };
};

beforeAll(async () => {
  suite = await startServiceSuite({ project: 'admin-a', others: ['admin-b'], env: MODE_ENV.dual });
  [project, other] = [suite.project, suite.others[0]!];
  owner = (await user('owner')).browser;
  stranger = (await user('owner', other)).browser;
});

afterAll(() => stopServiceSuite(suite));

describe('API keys', () => {
  const keys = () => `/api/ui/projects/${project.projectId}/api-keys`;
  const sdk = (publicKey: string, secretKey: string) =>
    new LangfuseClient({ publicKey, secretKey, baseUrl: suite.web.url });

  it('lists masked, creates with the secret once (it works), revokes (refused at once)', async () => {
    const listed = await send(owner, 'GET', keys());
    expect(listed.status).toBe(200);
    expect(listed.body.data).toEqual([
      {
        id: expect.any(String),
        publicKey: project.publicKey,
        displaySecretKey: `${project.secretKey.slice(0, 10)}...${project.secretKey.slice(-4)}`,
        note: null,
        createdAt: expect.any(String),
        lastUsedAt: null,
      },
    ]);
    expect(JSON.stringify(listed.body)).not.toContain(project.secretKey);

    const created = await send(owner, 'POST', keys(), { note: 'ci' });
    expect(created.status).toBe(201);
    const { id, publicKey, secretKey } = created.body;
    expect(secretKey).toMatch(/^sk-obs-/);
    expect((await sdk(publicKey, secretKey).api.projects.get()).data[0]!.id).toBe(project.projectId);
    const again = await send(owner, 'GET', keys());
    expect(again.body.data.map((k: { note: string | null }) => k.note)).toEqual([null, 'ci']);
    expect(JSON.stringify(again.body)).not.toContain(secretKey);

    expect((await send(owner, 'DELETE', `${keys()}/${id}`)).status).toBe(200);
    await expect(sdk(publicKey, secretKey).api.projects.get()).rejects.toMatchObject({ statusCode: 401 });
    expect((await send(owner, 'DELETE', `${keys()}/${id}`)).status).toBe(404);
    // The project's first key still works.
    expect((await sdk(project.publicKey, project.secretKey).api.projects.get()).data).toHaveLength(1);
  });

  it('members, viewers and other projects cannot see or change keys', async () => {
    const [member, viewer] = [(await user('member')).browser, (await user('viewer')).browser];
    for (const b of [member, viewer]) {
      expect((await send(b, 'GET', keys())).status).toBe(403);
      expect((await send(b, 'POST', keys(), {})).status).toBe(403);
    }
    expect((await send(stranger, 'GET', keys())).status).toBe(404);
    const firstKey = (await send(owner, 'GET', keys())).body.data[0].id;
    expect((await send(stranger, 'DELETE', `${keys()}/${firstKey}`)).status).toBe(404);
    // Another project's key id through this project's path is not found either.
    const theirs = (await send(stranger, 'GET', `/api/ui/projects/${other.projectId}/api-keys`)).body.data[0]
      .id;
    expect((await send(owner, 'DELETE', `${keys()}/${theirs}`)).status).toBe(404);
    expect(
      (await send(stranger, 'GET', `/api/ui/projects/${other.projectId}/api-keys`)).body.data,
    ).toHaveLength(1);
  });
});

describe('members and invitations', () => {
  const path = (rest: string) => `/api/ui/projects/${project.projectId}${rest}`;
  const tokenOf = (link: string) => link.split('/invite/')[1]!;
  const roleIn = async (b: Browser) =>
    (await request(b, 'GET', '/api/ui/projects')).body.data.find(
      (p: { id: string }) => p.id === project.projectId,
    )?.role;

  it('a new person joins by a one-time link, with the role given; owners change and remove roles', async () => {
    const email = `new-${hex(3)}@example.com`;
    const invited = await send(owner, 'POST', path('/invitations'), {
      email: email.toUpperCase(),
      role: 'member',
    });
    expect(invited.status).toBe(201);
    expect(invited.body.invitation).toMatchObject({ email, role: 'member' });
    expect(invited.body.link).toMatch(new RegExp(`^${suite.web.url}/invite/[A-Za-z0-9_-]{43}$`));
    const token = tokenOf(invited.body.link);
    expect((await send(owner, 'GET', path('/members'))).body.invitations).toEqual([invited.body.invitation]);

    const visitor = await openBrowser(suite.web.url);
    expect((await request(visitor, 'GET', `/api/ui/invitations/${token}`)).body).toEqual({
      email,
      role: 'member',
      projectName: 'admin-a',
      existingUser: false,
    });
    // A weak password is refused naming it, and the link stays usable.
    const weak = await send(visitor, 'POST', `/api/ui/invitations/${token}/accept`, {
      name: 'New',
      password: 'short',
    });
    expect(weak.status).toBe(400);
    expect(JSON.stringify(weak.body)).toContain('password');
    const password = `pw-${hex(12)}`;
    const accepted = await send(visitor, 'POST', `/api/ui/invitations/${token}/accept`, {
      name: 'New',
      password,
    });
    expect(accepted.status).toBe(200);
    expect(accepted.body.projectId).toBe(project.projectId);
    visitor.csrf = accepted.body.csrfToken;
    expect(await roleIn(visitor)).toBe('member');
    // Used once: the link is gone, and the invitation no longer pending.
    expect((await request(visitor, 'GET', `/api/ui/invitations/${token}`)).status).toBe(404);
    expect(
      (
        await send(await openBrowser(suite.web.url), 'POST', `/api/ui/invitations/${token}/accept`, {
          name: 'X',
          password,
        })
      ).status,
    ).toBe(404);
    expect((await send(owner, 'GET', path('/members'))).body.invitations).toEqual([]);
    // The new account signs in with its password.
    expect(await roleIn(await signIn(suite.web.url, { email, password }))).toBe('member');

    const members = (await send(owner, 'GET', path('/members'))).body.members;
    const newcomer = members.find((m: { email: string }) => m.email === email);
    expect(newcomer).toMatchObject({ name: 'New', role: 'member', via: 'project' });
    // A member cannot invite or change roles.
    expect(
      (await send(visitor, 'POST', path('/invitations'), { email: 'x@example.com', role: 'owner' })).status,
    ).toBe(403);
    expect((await send(visitor, 'PUT', path(`/members/${newcomer.userId}`), { role: 'owner' })).status).toBe(
      403,
    );

    expect((await send(owner, 'PUT', path(`/members/${newcomer.userId}`), { role: 'viewer' })).status).toBe(
      200,
    );
    expect(await roleIn(visitor)).toBe('viewer');
    expect((await send(owner, 'DELETE', path(`/members/${newcomer.userId}`))).status).toBe(200);
    expect(await roleIn(visitor)).toBeUndefined();
    expect((await request(visitor, 'GET', path(''))).status).toBe(404);
  });

  it('an existing account joins while signed in as itself; bad invitations are refused naming the field', async () => {
    const existing = await newProjectMember(suite.env, other.projectId, 'viewer');
    const { link } = (
      await send(owner, 'POST', path('/invitations'), { email: existing.email, role: 'viewer' })
    ).body;
    const token = tokenOf(link);
    const anonymous = await openBrowser(suite.web.url);
    expect((await request(anonymous, 'GET', `/api/ui/invitations/${token}`)).body.existingUser).toBe(true);
    expect(
      (
        await send(anonymous, 'POST', `/api/ui/invitations/${token}/accept`, {
          name: 'X',
          password: `pw-${hex(12)}`,
        })
      ).status,
    ).toBe(409);
    expect((await send(anonymous, 'POST', `/api/ui/invitations/${token}/join`)).status).toBe(401);
    expect((await send(stranger, 'POST', `/api/ui/invitations/${token}/join`)).status).toBe(403);
    const me = await signIn(suite.web.url, existing);
    expect((await send(me, 'POST', `/api/ui/invitations/${token}/join`)).status).toBe(200);
    expect(await roleIn(me)).toBe('viewer');

    for (const [body, field] of [
      [{ email: 'not-an-email', role: 'member' }, 'email'],
      [{ email: 'a@example.com', role: 'admin' }, 'role'],
    ] as const) {
      const r = await send(owner, 'POST', path('/invitations'), body);
      expect(r.status).toBe(400);
      expect(JSON.stringify(r.body)).toContain(field);
    }
    expect(
      (await send(owner, 'POST', path('/invitations'), { email: existing.email, role: 'owner' })).status,
    ).toBe(409);
    // Withdrawn invitations stop working; another project's owner cannot withdraw this one's.
    const w = (
      await send(owner, 'POST', path('/invitations'), { email: `w-${hex(3)}@example.com`, role: 'member' })
    ).body;
    expect((await send(stranger, 'DELETE', path(`/invitations/${w.invitation.id}`))).status).toBe(404);
    expect((await send(owner, 'DELETE', path(`/invitations/${w.invitation.id}`))).status).toBe(200);
    expect((await request(anonymous, 'GET', `/api/ui/invitations/${tokenOf(w.link)}`)).status).toBe(404);
  });

  it('the project keeps at least one owner', async () => {
    const members = (await send(owner, 'GET', path('/members'))).body.members as {
      userId: string;
      role: string;
    }[];
    const owners = members.filter((m) => m.role === 'owner');
    expect(owners).toHaveLength(1);
    const r = await send(owner, 'PUT', path(`/members/${owners[0]!.userId}`), { role: 'member' });
    expect(r.status).toBe(409);
    expect(JSON.stringify(r.body)).toContain('at least one owner');
    expect((await send(owner, 'DELETE', path(`/members/${owners[0]!.userId}`))).status).toBe(409);
    expect(await roleIn(owner)).toBe('owner');
  });
});
