/**
 * Alerts (`alert-rules`, `alert-channels`, `alert-notifications`), declared once and mounted twice:
 * under `/api/public/unstable` for the project of the API key, and under
 * `/api/ui/projects/:projectId` for the UI's project scope (writes for members and owners): rules over a Metrics
 * v2 measure, their state history, channels (signed webhooks, Slack incoming webhooks) with a test
 * send, and the notifications with every attempt. Errors answer the unstable API's envelope
 * `{message, code}`; another project's id is a 404. Channel secrets are encrypted with
 * ENCRYPTION_KEY; a webhook's signing secret is returned once, when it is made. Channel URLs pass
 * the LLM connections' address guard. Relational data, served in every write mode; the worker
 * evaluates rules where the events tables are written.
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { LLM_ENV } from '../../../contract/env.ts';
import { NotConfigured } from '../../../kernel/errors.ts';
import { found } from '../../../platform/http/answers.ts';
import type { RouteContext } from '../../../platform/http/context.ts';
import { type ProjectMount, pageQuery, projectRoutes } from '../../../platform/http/project-routes.ts';
import { PublicApiError } from '../../evaluation/errors.ts';
import { baseUrlProblem } from '../../llm-connections/address-policy.ts';
import { AddressRefused, checkHost } from '../../llm-connections/guarded-http.ts';
import {
  checkDefinition,
  createChannelRequest,
  createRuleRequest,
  definitionOf,
  invalidField,
  mergeDefinition,
  publicChannel,
  publicRule,
  type RuleDefinition,
  updateChannelRequest,
  updateRuleRequest,
} from '../api.ts';
import { deliver } from '../deliver.ts';
import { newSigningSecret } from '../notify.ts';
import {
  createChannel,
  createRule,
  createTestNotification,
  deleteChannel,
  deleteRule,
  findChannel,
  findRule,
  findUsableChannel,
  listChannels,
  listNotifications,
  listRules,
  ruleHistory,
  unknownChannels,
  updateChannel,
  updateRule,
} from '../store.ts';

/** A test send answers within one attempt's timeout; the lease keeps the worker off it meanwhile. */
const TEST_LEASE_MS = 60_000;

/** The channel URL's shape, and every address its host resolves to, under the address policy. */
async function checkUrl(ctx: RouteContext, url: string): Promise<void> {
  const problem = baseUrlProblem(url, 'url');
  if (problem) throw invalidField('url', problem.replace(/^url: /, ''));
  const host = new URL(url).hostname;
  try {
    await checkHost(ctx.config.llm, host);
  } catch (err) {
    if (err instanceof AddressRefused) throw invalidField('url', err.message);
    throw invalidField('url', `host ${host} does not resolve`);
  }
}

function encryptionKey(ctx: RouteContext): Buffer {
  const key = ctx.config.llm.encryptionKey;
  if (!key) throw new NotConfigured(`alert channels need ${LLM_ENV.encryptionKey} on the server`);
  return key;
}

export function alertRoutes(app: FastifyInstance, ctx: RouteContext, mount: ProjectMount): void {
  const declare = projectRoutes(app, mount);

  /** What the store cannot check by shape: the metric compiles, the channels are the project's. */
  const checkRule = async (projectId: string, d: RuleDefinition) => {
    checkDefinition(d);
    const unknown = await unknownChannels(ctx.pool, projectId, d.channelIds);
    if (unknown.length > 0)
      throw invalidField('channelIds', `no channel ${unknown.join(', ')} in this project`);
  };
  const loadRule = async (projectId: string, id: string) => {
    return found(await findRule(ctx.pool, projectId, id), 'Alert rule', id);
  };
  const nameTaken = (what: string, name: string) =>
    new PublicApiError('name_conflict', `${what} named ${name} already exists`);

  declare(
    {
      method: 'POST',
      path: '/alert-rules',
      summary: 'Create an alert rule over a Metrics v2 measure',
      body: createRuleRequest,
    },
    async ({ body, projectId }) => {
      const d = definitionOf(body);
      await checkRule(projectId, d);
      const id = await createRule(ctx.pool, projectId, d);
      if (!id) throw nameTaken('An alert rule', d.name);
      return publicRule(await loadRule(projectId, id));
    },
  );

  declare.listing(
    { path: '/alert-rules', summary: 'List alert rules with their state' },
    ({ projectId }, limit, offset) => listRules(ctx.pool, projectId, limit, offset),
    publicRule,
  );

  declare(
    {
      method: 'GET',
      path: '/alert-rules/:alertRuleId',
      summary: 'Get an alert rule with its state',
    },
    async ({ params, projectId }) => publicRule(await loadRule(projectId, params.alertRuleId)),
  );

  declare(
    {
      method: 'PATCH',
      path: '/alert-rules/:alertRuleId',
      summary: 'Update an alert rule (only the fields sent); it is evaluated again at the next tick',
      body: updateRuleRequest,
    },
    async ({ params, body, projectId }) => {
      const rule = await loadRule(projectId, params.alertRuleId);
      const d = mergeDefinition(rule, body);
      await checkRule(projectId, d);
      if (!(await updateRule(ctx.pool, rule, d))) throw nameTaken('An alert rule', d.name);
      return publicRule(await loadRule(projectId, rule.id));
    },
  );

  declare.deletion(
    {
      path: '/alert-rules/:alertRuleId',
      summary: 'Delete an alert rule with its history and notifications',
    },
    'Alert rule',
    ({ params, projectId }) => deleteRule(ctx.pool, projectId, params.alertRuleId),
  );

  declare.listing(
    {
      path: '/alert-rules/:alertRuleId/history',
      summary: 'The state transitions of an alert rule, newest first',
    },
    async ({ params, projectId }, limit, offset) => {
      const rule = await loadRule(projectId, params.alertRuleId);
      return ruleHistory(ctx.pool, rule.id, limit, offset);
    },
  );

  declare(
    {
      method: 'POST',
      path: '/alert-channels',
      summary: 'Create a channel; a webhook’s signing secret is in this response only',
      body: createChannelRequest,
    },
    async ({ body, projectId }) => {
      const key = encryptionKey(ctx);
      await checkUrl(ctx, body.url);
      const secret = body.type === 'webhook' ? newSigningSecret() : undefined;
      const channel = await createChannel(ctx.pool, key, projectId, body, secret);
      if (!channel) throw nameTaken('An alert channel', body.name);
      return publicChannel(channel, secret ? { signingSecret: secret } : undefined);
    },
  );

  declare.listing(
    { path: '/alert-channels', summary: 'List alert channels (secrets excluded)' },
    ({ projectId }, limit, offset) => listChannels(ctx.pool, projectId, limit, offset),
    publicChannel,
  );

  declare.lookup(
    { path: '/alert-channels/:alertChannelId', summary: 'Get an alert channel (secrets excluded)' },
    'Alert channel',
    ({ params, projectId }) => findChannel(ctx.pool, projectId, params.alertChannelId),
    publicChannel,
  );

  const loadUsable = async (projectId: string, id: string) => {
    const key = encryptionKey(ctx);
    const c = found(await findUsableChannel(ctx.pool, key, projectId, id), 'Alert channel', id);
    return { key, channel: c };
  };

  declare(
    {
      method: 'PATCH',
      path: '/alert-channels/:alertChannelId',
      summary: 'Rename a channel, change its URL, or rotate a webhook’s signing secret (returned once)',
      body: updateChannelRequest,
    },
    async ({ params, body, projectId }) => {
      const { key, channel } = await loadUsable(projectId, params.alertChannelId);
      if (body.rotateSecret && channel.type !== 'webhook')
        throw invalidField('rotateSecret', 'only a webhook channel has a signing secret');
      if (body.url !== undefined) await checkUrl(ctx, body.url);
      const secret = body.rotateSecret ? newSigningSecret() : undefined;
      const updated = await updateChannel(ctx.pool, key, channel, {
        name: body.name,
        url: body.url,
        signingSecret: secret,
      });
      if (updated === 'conflict') throw nameTaken('An alert channel', body.name ?? channel.name);
      return publicChannel(updated, secret ? { signingSecret: secret } : undefined);
    },
  );

  declare.deletion(
    {
      path: '/alert-channels/:alertChannelId',
      summary: 'Delete an alert channel (rules stop notifying it)',
    },
    'Alert channel',
    ({ params, projectId }) => deleteChannel(ctx.pool, projectId, params.alertChannelId),
  );

  declare(
    {
      method: 'POST',
      path: '/alert-channels/:alertChannelId/test',
      summary: 'Send a test notification now (one attempt, recorded) and answer its outcome',
    },
    async ({ params, projectId }) => {
      const { channel } = await loadUsable(projectId, params.alertChannelId);
      const n = await createTestNotification(
        ctx.pool,
        channel,
        {
          type: 'alert.test',
          projectId: channel.projectId,
          rule: null,
          state: null,
          previousState: null,
          value: null,
          evaluatedAt: new Date().toISOString(),
        },
        TEST_LEASE_MS,
      );
      const r = await deliver(ctx.pool, ctx.config.llm, channel, n, 0);
      return {
        notificationId: n.id,
        status: r.status,
        responseCode: r.responseCode,
        error: r.error,
      };
    },
  );

  declare.listing(
    {
      path: '/alert-notifications',
      summary: 'Notifications, newest first, each with its delivery attempts',
      query: pageQuery.extend({
        ruleId: z.string().min(1).optional(),
        channelId: z.string().min(1).optional(),
      }),
    },
    ({ query, projectId }, limit, offset) =>
      listNotifications(
        ctx.pool,
        projectId,
        { ruleId: query.ruleId, channelId: query.channelId },
        limit,
        offset,
      ),
  );
}
