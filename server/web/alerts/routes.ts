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
} from '../../alerts/api.ts';
import { deliver } from '../../alerts/deliver.ts';
import { newSigningSecret } from '../../alerts/notify.ts';
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
} from '../../alerts/store.ts';
import { LLM_ENV } from '../../contract/env.ts';
import { NotConfigured } from '../../errors.ts';
import { PublicApiError } from '../../evaluation/errors.ts';
import { baseUrlProblem } from '../../llm/address-policy.ts';
import { AddressRefused, checkHost } from '../../llm/guarded-http.ts';
import { pageMeta } from '../../reads/datasets.ts';
import type { WebContext } from '../core/context.ts';
import { type ProjectMount, q, route } from '../core/route.ts';

const page = z.object({ page: q.int(1, 1_000_000, 1), limit: q.int(1, 100, 50) });

/** A test send answers within one attempt's timeout; the lease keeps the worker off it meanwhile. */
const TEST_LEASE_MS = 60_000;

/** The channel URL's shape, and every address its host resolves to, under the address policy. */
async function checkUrl(ctx: WebContext, url: string): Promise<void> {
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

function encryptionKey(ctx: WebContext): Buffer {
  const key = ctx.config.llm.encryptionKey;
  if (!key) throw new NotConfigured(`alert channels need ${LLM_ENV.encryptionKey} on the server`);
  return key;
}

export function alertRoutes(app: FastifyInstance, ctx: WebContext, mount: ProjectMount): void {
  const write = mount.write ? { role: mount.write } : {};
  const notFound = (what: string, id: string) =>
    new PublicApiError('resource_not_found', `${what} ${id} not found`);

  /** What the store cannot check by shape: the metric compiles, the channels are the project's. */
  const checkRule = async (projectId: string, d: RuleDefinition) => {
    checkDefinition(d);
    const unknown = await unknownChannels(ctx.pool, projectId, d.channelIds);
    if (unknown.length > 0)
      throw invalidField('channelIds', `no channel ${unknown.join(', ')} in this project`);
  };
  const loadRule = async (projectId: string, id: string) => {
    const rule = await findRule(ctx.pool, projectId, id);
    if (!rule) throw notFound('Alert rule', id);
    return rule;
  };
  const nameTaken = (what: string, name: string) =>
    new PublicApiError('name_conflict', `${what} named ${name} already exists`);

  route(
    app,
    {
      method: 'POST',
      ...write,
      url: `${mount.prefix}/alert-rules`,
      tag: mount.tag,
      summary: 'Create an alert rule over a Metrics v2 measure',
      body: createRuleRequest,
    },
    async ({ body, req }) => {
      const d = definitionOf(body);
      await checkRule(mount.projectOf(req), d);
      const id = await createRule(ctx.pool, mount.projectOf(req), d);
      if (!id) throw nameTaken('An alert rule', d.name);
      return publicRule(await loadRule(mount.projectOf(req), id));
    },
  );

  route(
    app,
    {
      method: 'GET',
      url: `${mount.prefix}/alert-rules`,
      tag: mount.tag,
      summary: 'List alert rules with their state',
      query: page,
    },
    async ({ query, req }) => {
      const { rules, total } = await listRules(
        ctx.pool,
        mount.projectOf(req),
        query.limit,
        (query.page - 1) * query.limit,
      );
      return { data: rules.map(publicRule), meta: pageMeta(query.page, query.limit, total) };
    },
  );

  const ruleId = z.object({ alertRuleId: z.string().min(1) });
  route(
    app,
    {
      method: 'GET',
      url: `${mount.prefix}/alert-rules/:alertRuleId`,
      tag: mount.tag,
      summary: 'Get an alert rule with its state',
      params: ruleId,
    },
    async ({ params, req }) => publicRule(await loadRule(mount.projectOf(req), params.alertRuleId)),
  );

  route(
    app,
    {
      method: 'PATCH',
      ...write,
      url: `${mount.prefix}/alert-rules/:alertRuleId`,
      tag: mount.tag,
      summary: 'Update an alert rule (only the fields sent); it is evaluated again at the next tick',
      params: ruleId,
      body: updateRuleRequest,
    },
    async ({ params, body, req }) => {
      const rule = await loadRule(mount.projectOf(req), params.alertRuleId);
      const d = mergeDefinition(rule, body);
      await checkRule(mount.projectOf(req), d);
      if (!(await updateRule(ctx.pool, rule, d))) throw nameTaken('An alert rule', d.name);
      return publicRule(await loadRule(mount.projectOf(req), rule.id));
    },
  );

  route(
    app,
    {
      method: 'DELETE',
      ...write,
      url: `${mount.prefix}/alert-rules/:alertRuleId`,
      tag: mount.tag,
      summary: 'Delete an alert rule with its history and notifications',
      params: ruleId,
    },
    async ({ params, req }) => {
      if (!(await deleteRule(ctx.pool, mount.projectOf(req), params.alertRuleId)))
        throw notFound('Alert rule', params.alertRuleId);
      return { message: 'Alert rule successfully deleted' };
    },
  );

  route(
    app,
    {
      method: 'GET',
      url: `${mount.prefix}/alert-rules/:alertRuleId/history`,
      tag: mount.tag,
      summary: 'The state transitions of an alert rule, newest first',
      params: ruleId,
      query: page,
    },
    async ({ params, query, req }) => {
      const rule = await loadRule(mount.projectOf(req), params.alertRuleId);
      const { entries, total } = await ruleHistory(
        ctx.pool,
        rule.id,
        query.limit,
        (query.page - 1) * query.limit,
      );
      return { data: entries, meta: pageMeta(query.page, query.limit, total) };
    },
  );

  route(
    app,
    {
      method: 'POST',
      ...write,
      url: `${mount.prefix}/alert-channels`,
      tag: mount.tag,
      summary: 'Create a channel; a webhook’s signing secret is in this response only',
      body: createChannelRequest,
    },
    async ({ body, req }) => {
      const key = encryptionKey(ctx);
      await checkUrl(ctx, body.url);
      const secret = body.type === 'webhook' ? newSigningSecret() : undefined;
      const channel = await createChannel(ctx.pool, key, mount.projectOf(req), body, secret);
      if (!channel) throw nameTaken('An alert channel', body.name);
      return publicChannel(channel, secret ? { signingSecret: secret } : undefined);
    },
  );

  route(
    app,
    {
      method: 'GET',
      url: `${mount.prefix}/alert-channels`,
      tag: mount.tag,
      summary: 'List alert channels (secrets excluded)',
      query: page,
    },
    async ({ query, req }) => {
      const { channels, total } = await listChannels(
        ctx.pool,
        mount.projectOf(req),
        query.limit,
        (query.page - 1) * query.limit,
      );
      return { data: channels.map((c) => publicChannel(c)), meta: pageMeta(query.page, query.limit, total) };
    },
  );

  const channelId = z.object({ alertChannelId: z.string().min(1) });
  route(
    app,
    {
      method: 'GET',
      url: `${mount.prefix}/alert-channels/:alertChannelId`,
      tag: mount.tag,
      summary: 'Get an alert channel (secrets excluded)',
      params: channelId,
    },
    async ({ params, req }) => {
      const c = await findChannel(ctx.pool, mount.projectOf(req), params.alertChannelId);
      if (!c) throw notFound('Alert channel', params.alertChannelId);
      return publicChannel(c);
    },
  );

  const loadUsable = async (projectId: string, id: string) => {
    const key = encryptionKey(ctx);
    const c = await findUsableChannel(ctx.pool, key, projectId, id);
    if (!c) throw notFound('Alert channel', id);
    return { key, channel: c };
  };

  route(
    app,
    {
      method: 'PATCH',
      ...write,
      url: `${mount.prefix}/alert-channels/:alertChannelId`,
      tag: mount.tag,
      summary: 'Rename a channel, change its URL, or rotate a webhook’s signing secret (returned once)',
      params: channelId,
      body: updateChannelRequest,
    },
    async ({ params, body, req }) => {
      const { key, channel } = await loadUsable(mount.projectOf(req), params.alertChannelId);
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

  route(
    app,
    {
      method: 'DELETE',
      ...write,
      url: `${mount.prefix}/alert-channels/:alertChannelId`,
      tag: mount.tag,
      summary: 'Delete an alert channel (rules stop notifying it)',
      params: channelId,
    },
    async ({ params, req }) => {
      if (!(await deleteChannel(ctx.pool, mount.projectOf(req), params.alertChannelId)))
        throw notFound('Alert channel', params.alertChannelId);
      return { message: 'Alert channel successfully deleted' };
    },
  );

  route(
    app,
    {
      method: 'POST',
      ...write,
      url: `${mount.prefix}/alert-channels/:alertChannelId/test`,
      tag: mount.tag,
      summary: 'Send a test notification now (one attempt, recorded) and answer its outcome',
      params: channelId,
    },
    async ({ params, req }) => {
      const { channel } = await loadUsable(mount.projectOf(req), params.alertChannelId);
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

  route(
    app,
    {
      method: 'GET',
      url: `${mount.prefix}/alert-notifications`,
      tag: mount.tag,
      summary: 'Notifications, newest first, each with its delivery attempts',
      query: page.extend({ ruleId: z.string().min(1).optional(), channelId: z.string().min(1).optional() }),
    },
    async ({ query, req }) => {
      const { notifications, total } = await listNotifications(
        ctx.pool,
        mount.projectOf(req),
        { ruleId: query.ruleId, channelId: query.channelId },
        query.limit,
        (query.page - 1) * query.limit,
      );
      return { data: notifications, meta: pageMeta(query.page, query.limit, total) };
    },
  );
}
