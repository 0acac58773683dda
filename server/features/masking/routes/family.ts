/**
 * Masking rules (GET, POST, GET/PATCH/DELETE by id) and their dry run (`POST …/preview`),
 * declared once and mounted twice: under `/api/public/unstable` for the project of the API key,
 * and in the UI's project scope for the settings page (writes for owners). Every change is
 * audited and applies to this process's next write at once (the other replicas' within the
 * catalog's TTL).
 */
import type { FastifyInstance, FastifyPluginAsync, FastifyRequest } from 'fastify';
import { behaviourOf } from '../../../contract/write-modes.ts';
import { Conflict, InvalidRequestPart } from '../../../kernel/errors.ts';
import { found } from '../../../platform/http/answers.ts';
import type { RouteContext } from '../../../platform/http/context.ts';
import type { PluginOptions } from '../../../platform/http/plugin-options.ts';
import {
  type ProjectMount,
  projectRoutes,
  publicMount,
  uiMount,
} from '../../../platform/http/project-routes.ts';
import { auditAs } from '../../audit/routes/audit.ts';
import type { MaskingCatalog } from '../catalog.ts';
import { compileMasker } from '../masker.ts';
import { previewMasking } from '../preview.ts';
import { createMaskingRuleRequest, previewRequest, updateMaskingRuleRequest } from '../rules.ts';
import {
  createMaskingRule,
  deleteMaskingRule,
  enabledMaskingRules,
  findMaskingRule,
  listMaskingRules,
  updateMaskingRule,
} from '../store.ts';

export interface MaskingRouteContext extends RouteContext {
  /** Each project's masking rules, cached: a change invalidates the project's. */
  masking: MaskingCatalog;
}

function maskingRoutes(app: FastifyInstance, ctx: MaskingRouteContext, mount: ProjectMount): void {
  const declare = projectRoutes(app, mount);
  const changed = async (
    req: FastifyRequest,
    projectId: string,
    id: string,
    action: 'create' | 'update' | 'delete',
  ) => {
    ctx.masking.invalidate(projectId);
    await auditAs(ctx, req, { resourceType: 'masking-rule', resourceId: id, action });
  };

  declare(
    {
      method: 'POST',
      path: '/masking-rules',
      summary: 'Create a masking rule',
      body: createMaskingRuleRequest,
    },
    async ({ body, projectId, req }) => {
      const rule = await createMaskingRule(ctx.pool, projectId, body);
      if (!rule) throw new Conflict(`A masking rule named ${body.name} already exists`);
      await changed(req, projectId, rule.id, 'create');
      return rule;
    },
  );

  declare.listing({ path: '/masking-rules', summary: 'List masking rules' }, ({ projectId }, limit, offset) =>
    listMaskingRules(ctx.pool, projectId, limit, offset),
  );

  declare.lookup(
    { path: '/masking-rules/:maskingRuleId', summary: 'Get a masking rule' },
    'Masking rule',
    ({ params, projectId }) => findMaskingRule(ctx.pool, projectId, params.maskingRuleId),
  );

  declare(
    {
      method: 'PATCH',
      path: '/masking-rules/:maskingRuleId',
      summary: 'Update a masking rule (only the fields sent)',
      body: updateMaskingRuleRequest,
    },
    async ({ params, body, projectId, req }) => {
      const id = params.maskingRuleId;
      const rule = found(await findMaskingRule(ctx.pool, projectId, id), 'Masking rule', id);
      if (body.pattern !== undefined && rule.detector !== 'custom')
        throw new InvalidRequestPart('body', [
          { code: 'custom', path: ['pattern'], message: 'a built-in detector has no pattern' },
        ]);
      const updated = found(await updateMaskingRule(ctx.pool, projectId, id, body), 'Masking rule', id);
      await changed(req, projectId, id, 'update');
      return updated;
    },
  );

  declare.deletion(
    { path: '/masking-rules/:maskingRuleId', summary: 'Delete a masking rule' },
    'Masking rule',
    async ({ params, projectId, req }) => {
      const name = await deleteMaskingRule(ctx.pool, projectId, params.maskingRuleId);
      if (name === undefined) return false;
      await changed(req, projectId, params.maskingRuleId, 'delete');
      return true;
    },
  );

  const source = behaviourOf(ctx.config.mode).writesLegacyTables ? 'observations' : 'events_full';
  declare(
    {
      method: 'POST',
      path: '/masking-preview',
      summary:
        "Dry run: what the given rules (or the project's) would change in its most recent observations",
      body: previewRequest,
      // A dry run changes nothing: any member may try one.
      role: { atLeast: 'viewer', refusal: 'only project members preview masking rules' },
    },
    async ({ body, projectId }) => {
      const rules = body.rules ?? (await enabledMaskingRules(ctx.pool, projectId));
      return previewMasking(ctx.analytics, source, projectId, body.limit, compileMasker(rules));
    },
  );
}

export const maskingPlugin: FastifyPluginAsync<PluginOptions<MaskingRouteContext>> = async (app, { ctx }) => {
  maskingRoutes(app, ctx, publicMount('/api/public/unstable', 'Masking (unstable)'));
};

/** Registered in the UI's project scope, whose hook checks the project and the role. */
export const uiMaskingPlugin: FastifyPluginAsync<PluginOptions<MaskingRouteContext>> = async (
  app,
  { ctx },
) => {
  maskingRoutes(app, ctx, uiMount({ atLeast: 'owner', refusal: 'only owners change masking rules' }));
};
