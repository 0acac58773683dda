/**
 * The administration API of the reference (`projects.yml` create/update/delete and API keys,
 * `organizations.yml`), for organization-scoped keys only (server/app/web/core/auth.ts): an organization's
 * projects, their API keys, and the memberships of the organization and its projects. Roles are
 * the reference's names (OWNER, MEMBER, VIEWER); ADMIN, which this deployment does not have, is
 * refused naming it. A deleted project answers 202: its keys and grants go at once, its data with
 * the worker's next pass.
 */
import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import { BadRequest } from '../../../kernel/errors.ts';
import { found, notFound } from '../../../platform/http/answers.ts';
import type { PluginOptions } from '../../../platform/http/plugin-options.ts';
import { route } from '../../../platform/http/route.ts';
import { createApiKey, insertProject, listApiKeys, revokeApiKey } from '../keys.ts';
import {
  isOrganizationMember,
  markProjectDeleted,
  memberships,
  organizationKeys,
  organizationProjects,
  updateProject,
  userExists,
} from '../organizations.ts';
import type { ProjectsRouteContext } from './context.ts';

/** The reference's retention rule, in days: 0 (keep forever) or at least 3; `refusal` says it. */
export const retentionDays = (refusal: string) =>
  z
    .number()
    .int()
    .min(0)
    .max(36_500)
    .refine((d) => d === 0 || d >= 3, refusal);
const retention = retentionDays('must be 0 or at least 3 days');
const metadata = z.record(z.string(), z.unknown());
const projectBody = z.object({
  name: z.string().trim().min(1).max(200),
  metadata: metadata.nullish(),
  retention: retention.optional(),
});
const projectParams = z.object({ projectId: z.string().min(1) });
const ROLE_NAMES = { OWNER: 'owner', MEMBER: 'member', VIEWER: 'viewer' } as const;
const membershipRole = z.enum(['OWNER', 'ADMIN', 'MEMBER', 'VIEWER']).refine((r) => r !== 'ADMIN', {
  message: 'ADMIN is not a role of this deployment: use OWNER, MEMBER or VIEWER',
});

const wireMembership = (m: { userId: string; role: string; email: string; name: string | null }) => ({
  userId: m.userId,
  role: m.role.toUpperCase(),
  email: m.email,
  name: m.name ?? '',
});

export const organizationsPlugin: FastifyPluginAsync<PluginOptions<ProjectsRouteContext>> = async (
  app,
  { ctx },
) => {
  const pool = ctx.pool;
  const orgName = async (orgId: string) =>
    (await pool.query<{ name: string }>('SELECT name FROM organizations WHERE id = $1', [orgId])).rows[0]
      ?.name ?? '';
  /** The project as `GET /api/public/projects` shows it; 404 outside the key's organization. */
  const projectOf = async (orgId: string, projectId: string) => {
    const [p] = await organizationProjects(pool, orgId, projectId);
    if (!p) throw notFound('project', projectId);
    return {
      id: p.id,
      name: p.name,
      organization: { id: orgId, name: await orgName(orgId) },
      metadata: p.metadata,
      ...(p.retentionDays ? { retentionDays: p.retentionDays } : {}),
    };
  };

  route(
    app,
    {
      method: 'POST',
      url: '/api/public/projects',
      tag: 'Projects',
      summary: 'Create a project',
      body: projectBody,
    },
    async ({ body, req, reply }) => {
      const projectId = await insertProject(pool, body.name, {
        orgId: req.organization.orgId,
        metadata: body.metadata ?? {},
        retentionDays: body.retention ?? null,
      });
      reply.code(201);
      return projectOf(req.organization.orgId, projectId);
    },
  );

  route(
    app,
    {
      method: 'PUT',
      url: '/api/public/projects/:projectId',
      tag: 'Projects',
      summary: 'Rename a project, set its metadata or retention',
      params: projectParams,
      body: projectBody,
    },
    async ({ params, body, req }) => {
      found(
        await updateProject(pool, req.organization.orgId, params.projectId, {
          name: body.name,
          metadata: body.metadata ?? undefined,
          retentionDays: body.retention,
        }),
        'project',
        params.projectId,
      );
      return projectOf(req.organization.orgId, params.projectId);
    },
  );

  route(
    app,
    {
      method: 'DELETE',
      url: '/api/public/projects/:projectId',
      tag: 'Projects',
      summary: 'Delete a project with all its data (asynchronously)',
      params: projectParams,
    },
    async ({ params, req, reply }) => {
      const deleted = found(
        await markProjectDeleted(pool, req.organization.orgId, params.projectId),
        'project',
        params.projectId,
      );
      for (const key of deleted.revokedKeys) ctx.keys.forget(key);
      reply.code(202);
      return {
        success: true,
        message: 'Project deletion has been initiated; its data is removed in the background',
      };
    },
  );

  const keysUrl = '/api/public/projects/:projectId/apiKeys';
  route(
    app,
    { method: 'GET', url: keysUrl, tag: 'Projects', summary: "A project's API keys", params: projectParams },
    async ({ params, req }) => {
      await projectOf(req.organization.orgId, params.projectId);
      const keys = await listApiKeys(pool, params.projectId);
      return {
        apiKeys: keys.map(({ note, lastUsedAt, ...k }) => ({
          ...k,
          ...(note ? { note } : {}),
          ...(lastUsedAt ? { lastUsedAt } : {}),
        })),
      };
    },
  );

  route(
    app,
    {
      method: 'POST',
      url: keysUrl,
      tag: 'Projects',
      summary: 'Create an API key of a project; its secret is in this answer only',
      params: projectParams,
      body: z
        .object({
          note: z.string().max(200).nullish(),
          publicKey: z
            .string()
            .regex(/^pk-lf-[A-Za-z0-9_-]{8,200}$/, "must start with 'pk-lf-'")
            .nullish(),
          secretKey: z
            .string()
            .regex(
              /^sk-lf-[A-Za-z0-9_-]{24,200}$/,
              "must start with 'sk-lf-' and hold at least 24 more characters",
            )
            .nullish(),
        })
        .refine((b) => Boolean(b.publicKey) === Boolean(b.secretKey), {
          message: 'publicKey and secretKey are given together or not at all',
          path: ['secretKey'],
        }),
    },
    async ({ params, body, req }) => {
      await projectOf(req.organization.orgId, params.projectId);
      const predefined =
        body.publicKey && body.secretKey
          ? { publicKey: body.publicKey, secretKey: body.secretKey }
          : undefined;
      const k = await createApiKey(pool, params.projectId, body.note ?? null, predefined).catch(
        (err: { code?: string }) => {
          if (err.code === '23505')
            throw new BadRequest('Invalid request data', 'publicKey: this key exists');
          throw err;
        },
      );
      return {
        id: k.id,
        createdAt: k.createdAt,
        publicKey: k.publicKey,
        secretKey: k.secretKey,
        displaySecretKey: k.displaySecretKey,
        ...(k.note ? { note: k.note } : {}),
      };
    },
  );

  route(
    app,
    {
      method: 'DELETE',
      url: `${keysUrl}/:apiKeyId`,
      tag: 'Projects',
      summary: 'Revoke an API key of a project',
      params: projectParams.extend({ apiKeyId: z.string().min(1) }),
    },
    async ({ params, req }) => {
      await projectOf(req.organization.orgId, params.projectId);
      const revoked = found(
        await revokeApiKey(pool, params.projectId, params.apiKeyId),
        'API key',
        params.apiKeyId,
      );
      ctx.keys.forget(revoked);
      return { success: true };
    },
  );

  route(
    app,
    {
      method: 'GET',
      url: '/api/public/organizations/projects',
      tag: 'Organizations',
      summary: "The organization's projects",
    },
    async ({ req }) => ({
      projects: (await organizationProjects(pool, req.organization.orgId)).map(
        ({ retentionDays: _, ...p }) => p,
      ),
    }),
  );

  route(
    app,
    {
      method: 'GET',
      url: '/api/public/organizations/apiKeys',
      tag: 'Organizations',
      summary: "The organization's API keys",
    },
    async ({ req }) => ({
      apiKeys: (await organizationKeys(pool, req.organization.orgId)).map(({ note, lastUsedAt, ...k }) => ({
        ...k,
        ...(note ? { note } : {}),
        ...(lastUsedAt ? { lastUsedAt } : {}),
      })),
    }),
  );

  // Memberships of the organization (no :projectId) and of one of its projects.
  for (const scope of ['organization', 'project'] as const) {
    const url =
      scope === 'organization'
        ? '/api/public/organizations/memberships'
        : '/api/public/projects/:projectId/memberships';
    const params = scope === 'organization' ? z.object({}) : projectParams;
    const projectIdOf = (p: object) =>
      scope === 'project' ? (p as { projectId: string }).projectId : undefined;
    const check = async (orgId: string, p: object) => {
      const projectId = projectIdOf(p);
      if (projectId) await projectOf(orgId, projectId);
      return projectId;
    };

    route(
      app,
      { method: 'GET', url, tag: 'Organizations', summary: `The ${scope}'s memberships`, params },
      async ({ params: p, req }) => {
        const projectId = await check(req.organization.orgId, p);
        return {
          memberships: (await memberships(pool, req.organization.orgId, projectId)).map(wireMembership),
        };
      },
    );

    route(
      app,
      {
        method: 'PUT',
        url,
        tag: 'Organizations',
        summary: `Create or update a membership of the ${scope}`,
        params,
        body: z.object({ userId: z.string().min(1), role: membershipRole }),
      },
      async ({ params: p, body, req }) => {
        const orgId = req.organization.orgId;
        const projectId = await check(orgId, p);
        found(await userExists(pool, body.userId), 'user', body.userId);
        if (projectId && !(await isOrganizationMember(pool, orgId, body.userId)))
          throw new BadRequest(
            'Invalid request data',
            'userId: the user must be a member of the organization first',
          );
        const role = ROLE_NAMES[body.role as keyof typeof ROLE_NAMES];
        await pool.query(
          projectId
            ? `INSERT INTO project_memberships (project_id, user_id, role) VALUES ($1, $2, $3)
               ON CONFLICT (project_id, user_id) DO UPDATE SET role = EXCLUDED.role`
            : `INSERT INTO organization_memberships (org_id, user_id, role) VALUES ($1, $2, $3)
               ON CONFLICT (org_id, user_id) DO UPDATE SET role = EXCLUDED.role`,
          [projectId ?? orgId, body.userId, role],
        );
        const m = (await memberships(pool, orgId, projectId)).find((x) => x.userId === body.userId)!;
        return wireMembership(m);
      },
    );

    route(
      app,
      {
        method: 'DELETE',
        url,
        tag: 'Organizations',
        summary: `Delete a membership of the ${scope}`,
        params,
        body: z.object({ userId: z.string().min(1) }),
      },
      async ({ params: p, body, req }) => {
        const orgId = req.organization.orgId;
        const projectId = await check(orgId, p);
        const { rowCount } = await pool.query(
          projectId
            ? 'DELETE FROM project_memberships WHERE project_id = $1 AND user_id = $2'
            : 'DELETE FROM organization_memberships WHERE org_id = $1 AND user_id = $2',
          [projectId ?? orgId, body.userId],
        );
        if (!rowCount) throw notFound('membership of user', body.userId);
        return { message: 'Membership deleted successfully', userId: body.userId };
      },
    );
  }
};
