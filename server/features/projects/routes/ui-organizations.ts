/**
 * Organizations and their projects from the web UI (`/api/ui/organizations`): the signed-in user's
 * organizations; a new organization, for deployment admins and project owners (its creator its
 * owner); and, in the organization scope (server/app/web/ui-shell/scope.ts) for its owners, a rename, a new
 * project, and the deletion of an organization without projects (its name typed to confirm). Every
 * change is audited with the user who made it.
 */
import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import { BadRequest, Conflict } from '../../../kernel/errors.ts';
import type { UiScopedOptions } from '../../../platform/http/plugin-options.ts';
import { route } from '../../../platform/http/route.ts';
import { auditAs } from '../../audit/routes/audit.ts';
import { DEPLOYMENT_ORG } from '../../users/deployment-admin.ts';
import { projectsOf } from '../../users/store.ts';
import { insertProject } from '../keys.ts';
import {
  createOrganization,
  deleteOrganization,
  organizationsOf,
  renameOrganization,
} from '../user-organizations.ts';

export const nameBody = z.strictObject({ name: z.string().trim().min(1).max(200) });
const orgParams = z.object({ orgId: z.string().min(1) });
const OWNERS = { atLeast: 'owner', refusal: 'only owners of the organization change it' } as const;

export const uiOrganizationsPlugin: FastifyPluginAsync<UiScopedOptions> = async (app, { ctx, scopes }) => {
  route(
    app,
    { method: 'GET', url: '/api/ui/organizations', tag: 'UI', summary: "The signed-in user's organizations" },
    async ({ req }) => ({ data: await organizationsOf(ctx.pool, req.session.user.id) }),
  );

  app.register(async (owners) => {
    scopes.owners(owners, 'only deployment admins and project owners create organizations');
    route(
      owners,
      {
        method: 'POST',
        url: '/api/ui/organizations',
        tag: 'UI',
        summary: 'Create an organization; the signed-in user becomes its owner',
        body: nameBody,
      },
      async ({ body, req, reply }) => {
        const org = await createOrganization(ctx.pool, req.session.user.id, body.name);
        await auditAs(ctx, req, {
          projectId: null,
          orgId: org.id,
          resourceType: 'organization',
          resourceId: org.id,
          action: 'create',
        });
        reply.code(201);
        return { organization: org };
      },
    );
  });

  app.register(async (org) => {
    scopes.organization(org);
    route(
      org,
      {
        method: 'PUT',
        url: '/api/ui/organizations/:orgId',
        tag: 'UI',
        summary: 'Rename an organization',
        params: orgParams,
        role: OWNERS,
        body: nameBody,
      },
      async ({ body, req }) => {
        await renameOrganization(ctx.pool, req.org.id, body.name);
        await auditAs(ctx, req, {
          projectId: null,
          orgId: req.org.id,
          resourceType: 'organization',
          resourceId: req.org.id,
          action: 'update',
        });
        return { organization: { ...req.org, name: body.name } };
      },
    );

    route(
      org,
      {
        method: 'DELETE',
        url: '/api/ui/organizations/:orgId',
        tag: 'UI',
        summary: 'Delete an organization that holds no project (its name typed to confirm)',
        params: orgParams,
        role: OWNERS,
        body: z.strictObject({ confirmName: z.string() }),
      },
      async ({ body, req }) => {
        const { id, name } = req.org;
        if (id === DEPLOYMENT_ORG)
          throw new BadRequest(
            'Invalid request data',
            'orgId: the default organization holds the projects the CLI creates',
          );
        if (body.confirmName !== name)
          throw new BadRequest(
            'Invalid request data',
            "confirmName: type the organization's name to delete it",
          );
        const { projects } = await deleteOrganization(ctx.pool, id);
        if (projects > 0)
          throw new Conflict(
            `projects: the organization still holds ${projects} project(s): delete them first (a deleted project leaves once the worker has removed its data)`,
          );
        await auditAs(ctx, req, {
          projectId: null,
          orgId: id,
          resourceType: 'organization',
          resourceId: id,
          action: 'delete',
        });
        return { ok: true };
      },
    );

    route(
      org,
      {
        method: 'POST',
        url: '/api/ui/organizations/:orgId/projects',
        tag: 'UI',
        summary: 'Create a project in an organization',
        params: orgParams,
        role: OWNERS,
        body: nameBody,
      },
      async ({ body, req, reply }) => {
        const projectId = await insertProject(ctx.pool, body.name, { orgId: req.org.id });
        await auditAs(ctx, req, {
          projectId,
          orgId: req.org.id,
          resourceType: 'project',
          resourceId: projectId,
          action: 'create',
        });
        reply.code(201);
        const [project] = await projectsOf(ctx.pool, req.session.user.id, projectId);
        return { project };
      },
    );
  });
};
