/**
 * Prompt management (`/api/public/v2/prompts`): create text and chat prompt versions, get one by
 * version or label (references to other prompts resolved, ../../prompts/composition.ts), list names
 * with their versions, move labels, delete versions. Relational data,
 * served in every write mode. Names may contain `/` (folders); the SDKs send it URL-encoded in the
 * path. The SDKs cache prompts on their side (by TTL) and send no conditional request headers, so
 * responses carry none.
 */
import type pg from 'pg';
import { z } from 'zod';
import { NotFound } from '../../../kernel/errors.ts';
import { familyPlugin, pageResponse, publicMount } from '../../../platform/http/project-routes.ts';
import { type Parsed, q } from '../../../platform/http/route.ts';
import {
  createPromptRequest,
  describeSelector,
  selectorOf,
  updateLabelsRequest,
  withDefaultType,
} from '../rules.ts';
import { addLabels, createPrompt, deletePromptVersions, getPrompt, listPromptMeta } from '../store.ts';

const prompt = z
  .object({
    id: z.string(),
    name: z.string(),
    version: z.number(),
    type: z.enum(['text', 'chat']),
    prompt: z.unknown(),
    config: z.unknown(),
    labels: z.array(z.string()),
    tags: z.array(z.string()),
    commitMessage: z.string().nullable(),
  })
  .loose();
const promptMeta = z.object({
  name: z.string(),
  type: z.enum(['text', 'chat']),
  versions: z.array(z.number()),
  labels: z.array(z.string()),
  tags: z.array(z.string()),
  lastUpdatedAt: z.string(),
  lastConfig: z.unknown(),
});
const nameParam = z.object({ name: z.string().min(1) });
/**
 * Folder names (`team/greet`) arrive URL-encoded from most SDKs (one path segment) but with bare
 * slashes from Python SDK 2.x, which quotes names keeping `/`; the wildcard routes take the latter.
 */
/** Versions are PostgreSQL integers. */
const MAX_PROMPT_VERSION = 2_147_483_647;
const promptVersion = z.coerce.number().int().min(1).max(MAX_PROMPT_VERSION);

const wildcardName = z
  .object({ '*': z.string().min(1) })
  .transform((p) => ({ name: p['*'] }))
  .pipe(nameParam);

/** Moves `labels` onto a prompt version (each leaves the version that had it); 404 for a missing one. */
export async function labelVersion(
  pool: pg.Pool,
  projectId: string,
  { name, version }: { name: string; version: number },
  labels: string[],
) {
  const updated = await addLabels(pool, projectId, name, version, labels);
  if (!updated) throw new NotFound(describeSelector(name, { version }));
  return updated;
}

export const promptsPlugin = familyPlugin(publicMount('/api/public', 'Prompts'), (declare, ctx) => {
  declare(
    {
      method: 'POST',
      path: '/v2/prompts',
      summary: 'Create a new version of a prompt (version numbers count up per name; `latest` moves to it)',
      body: z.preprocess(withDefaultType, createPromptRequest),
      response: prompt,
    },
    async ({ body, projectId }) => createPrompt(ctx.pool, projectId, body),
  );

  const getQuery = z.object({
    version: promptVersion.optional(),
    label: z.string().min(1).optional(),
    resolve: q.bool(),
  });
  const getOne = async ({
    params,
    query,
    req,
  }: Parsed<z.ZodType<{ name: string }>, typeof getQuery, z.ZodUnknown>) => {
    const selector = selectorOf(query);
    const found = await getPrompt(
      ctx.pool,
      req.principal.projectId,
      params.name,
      selector,
      query.resolve !== false,
    );
    if (!found) throw new NotFound(describeSelector(params.name, selector));
    return found;
  };
  declare(
    {
      method: 'GET',
      path: '/v2/prompts/:name',
      summary:
        'Get a prompt by version or label (default label: production), its `@@@langfusePrompt:…@@@` references resolved unless `resolve=false`',
      query: getQuery,
      response: prompt,
    },
    getOne,
  );
  declare(
    {
      method: 'GET',
      path: '/v2/prompts/*',
      summary: 'Get a prompt in a folder whose name arrives with unencoded slashes (Python SDK 2.x)',
      params: wildcardName,
      query: getQuery,
      response: prompt,
    },
    getOne,
  );

  declare.listing(
    {
      path: '/v2/prompts',
      summary: 'List prompt names with their versions, labels and tags',
      query: z.object({
        name: z.string().optional(),
        label: z.string().optional(),
        tag: z.string().optional(),
        ...q.page(1000, 50),
        fromUpdatedAt: q.datetime().optional(),
        toUpdatedAt: q.datetime().optional(),
      }),
      response: pageResponse(promptMeta),
    },
    // The store takes the filters alone: the page's fields are left out of them.
    ({ query: { page, limit, ...filter }, projectId }, _limit, offset) =>
      listPromptMeta(ctx.pool, projectId, filter, limit, offset),
  );

  const deleteQuery = z
    .object({ version: promptVersion.optional(), label: z.string().min(1).optional() })
    .refine((x) => x.version === undefined || x.label === undefined, {
      message: 'Cannot specify both version and label',
      path: ['label'],
    });
  const deleteVersions = async ({
    params,
    query,
    req,
    reply,
  }: Parsed<z.ZodType<{ name: string }>, typeof deleteQuery, z.ZodUnknown>) => {
    const selector = query.version === undefined && query.label === undefined ? undefined : selectorOf(query);
    const deleted = await deletePromptVersions(
      ctx.pool,
      req.principal.projectId,
      params.name,
      selector,
      req.principal.publicKey,
    );
    if (deleted.length === 0) {
      throw new NotFound(
        selector ? describeSelector(params.name, selector) : `Prompt not found: '${params.name}'`,
      );
    }
    return reply.code(204).send();
  };
  declare(
    {
      method: 'DELETE',
      path: '/v2/prompts/:name',
      summary:
        'Delete the versions of a prompt with a version or label, all of them without either (204; 404 when none match)',
      query: deleteQuery,
    },
    deleteVersions,
  );
  declare(
    {
      method: 'DELETE',
      path: '/v2/prompts/*',
      summary: 'Delete versions of a prompt in a folder whose name arrives with unencoded slashes',
      params: wildcardName,
      query: deleteQuery,
    },
    deleteVersions,
  );

  const versionParams = nameParam.extend({ version: promptVersion });
  const versionPath = z.object({ '*': z.string() }).transform((p, tx) => {
    const m = /^(.+)\/versions\/([1-9]\d*)$/.exec(p['*']);
    if (m && Number(m[2]) <= MAX_PROMPT_VERSION) return { name: m[1]!, version: Number(m[2]) };
    tx.addIssue({ code: 'custom', path: ['*'], message: 'expected <prompt name>/versions/<version>' });
    return z.NEVER;
  });
  const addVersionLabels = ({
    params,
    body,
    req,
  }: Parsed<z.ZodType<{ name: string; version: number }>, z.ZodObject, typeof updateLabelsRequest>) =>
    labelVersion(ctx.pool, req.principal.projectId, params, body.newLabels);
  declare(
    {
      method: 'PATCH',
      path: '/v2/prompts/:name/versions/:version',
      summary: 'Add labels to a prompt version (each label leaves the version that had it)',
      params: versionParams,
      body: updateLabelsRequest,
      response: prompt,
    },
    addVersionLabels,
  );
  declare(
    {
      method: 'PATCH',
      path: '/v2/prompts/*',
      summary:
        'Add labels to a version of a prompt in a folder sent with unencoded slashes (`<name>/versions/<n>`)',
      params: versionPath,
      body: updateLabelsRequest,
      response: prompt,
    },
    addVersionLabels,
  );
});
