/**
 * Every route the web app registers under `/api/public/unstable` (found in the app's own route
 * declarations, so a route added later is walked as well) answers its refusals in the reference's
 * envelope (fern/apis/server/definition/unstable/errors.yml, `PublicApiError`): `{message, code,
 * details?}` with the code of the failure: 401 `authentication_failed` without a key or with a
 * wrong one, 403 `access_denied` for an organization's key on these project routes, 405
 * `method_not_allowed`, and a request part that does not parse is a 400 whose `details.issues`
 * name the failing `path`: `invalid_query` for the query string, `invalid_body` for the body.
 * In process over real stores (PostgreSQL, the embedded ClickHouse engine).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createProject } from '../../server/features/projects/keys.ts';
import { createOrganizationKey } from '../../server/features/projects/organizations.ts';
import type { AnySpec } from '../../server/platform/http/route.ts';
import { type InProcessWeb, type Stores, serveWeb, startStores } from '../fixtures/web-in-process.ts';

/** The codes of the reference's `PublicApiErrorCode` enum. */
const CODES = [
  'authentication_failed',
  'access_denied',
  'invalid_request',
  'invalid_query',
  'invalid_body',
  'invalid_filter_value',
  'invalid_json_path',
  'invalid_variable_mapping',
  'missing_variable_mapping',
  'duplicate_variable_mapping',
  'resource_not_found',
  'name_conflict',
  'evaluator_preflight_failed',
  'conflict',
  'unprocessable_content',
  'rate_limited',
  'method_not_allowed',
  'internal_error',
];
/** `PublicApiError`: message, code, optional details; a validation issue is `{code, message, path}`. */
const envelope = z.strictObject({
  message: z.string().min(1),
  code: z.enum(CODES),
  details: z
    .looseObject({
      issues: z
        .array(
          z.strictObject({
            code: z.string(),
            message: z.string(),
            path: z.array(z.union([z.string(), z.number()])),
          }),
        )
        .optional(),
    })
    .optional(),
});

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

let stores: Stores;
let web: InProcessWeb;
let projectAuth: string;
let orgAuth: string;
const basic = (publicKey: string, secretKey: string) =>
  `Basic ${Buffer.from(`${publicKey}:${secretKey}`).toString('base64')}`;

beforeAll(async () => {
  stores = await startStores();
  web = await serveWeb(stores, { SERVICE_MIGRATION_V4_WRITE_MODE: 'events_only' });
  const project = await createProject(stores.pool, 'unstable-envelope');
  projectAuth = basic(project.publicKey, project.secretKey);
  const org = await createOrganizationKey(stores.pool, 'default', null);
  orgAuth = basic(org.publicKey, org.secretKey);
}, 120_000);

afterAll(async () => {
  await web?.app.close();
  await stores?.stop();
});

const unstable = (): AnySpec[] => web.app.routeSpecs.filter((s) => s.url.startsWith('/api/public/unstable/'));
/** A concrete URL of a route: each path parameter an id nothing has. */
const concrete = (url: string) => url.replace(/:\w+/g, 'none');

async function send(method: string, url: string, authorization: string | undefined, payload?: unknown) {
  const res = await web.app.inject({
    method: method as 'GET',
    url,
    headers: authorization ? { authorization } : {},
    ...(payload === undefined ? {} : { payload: payload as object }),
  });
  return { status: res.statusCode, body: res.json() as z.infer<typeof envelope> };
}

/** A value the field's schema refuses: the body that carries it fails at that field's path. */
function refusedValue(field: z.ZodType): unknown {
  const candidate = [12_345, 'text', true, [], {}, [{}]].find((v) => !field.safeParse(v).success);
  if (candidate === undefined) throw new Error('the field accepts every candidate value');
  return candidate;
}

/** The fields of an object body, or of a union's first object (its discriminator comes first). */
function objectShape(body: z.ZodType): Record<string, z.ZodType> | undefined {
  if (body instanceof z.ZodObject) return body.shape;
  if (body instanceof z.ZodUnion) return objectShape(body.options[0] as z.ZodType);
  return undefined;
}

describe('the unstable routes answer the reference envelope', () => {
  it('finds the unstable family registered (evaluators, rules, dashboards, widgets, alerts)', () => {
    const urls = new Set(unstable().map((s) => s.url));
    for (const family of ['evaluators', 'evaluation-rules', 'dashboards', 'dashboard-widgets'])
      expect([...urls].some((u) => u.startsWith(`/api/public/unstable/${family}`))).toBe(true);
  });

  it('401 authentication_failed without a key or with a wrong one', async () => {
    for (const spec of unstable()) {
      for (const auth of [undefined, basic('pk-lf-none', 'sk-lf-none')]) {
        const res = await send(spec.method, concrete(spec.url), auth, spec.body ? {} : undefined);
        const what = `${spec.method} ${spec.url} ${auth ? 'wrong key' : 'no key'}`;
        expect(res.status, what).toBe(401);
        expect(envelope.parse(res.body), what).toMatchObject({ code: 'authentication_failed' });
      }
    }
  });

  it("403 access_denied with an organization's key (these routes act on the key's project)", async () => {
    for (const spec of unstable()) {
      const res = await send(spec.method, concrete(spec.url), orgAuth, spec.body ? {} : undefined);
      expect(res.status, `${spec.method} ${spec.url}`).toBe(403);
      expect(envelope.parse(res.body)).toMatchObject({ code: 'access_denied' });
    }
  });

  it('405 method_not_allowed for a method the path does not have', async () => {
    const byPath = Map.groupBy(unstable(), (s) => s.url);
    for (const [url, specs] of byPath) {
      const missing = METHODS.find((m) => !specs.some((s) => s.method === m));
      if (!missing) continue;
      const res = await send(missing, concrete(url), projectAuth, missing === 'GET' ? undefined : {});
      expect(res.status, `${missing} ${url}`).toBe(405);
      expect(envelope.parse(res.body)).toMatchObject({ code: 'method_not_allowed' });
    }
  });

  it('400 invalid_query naming the parameter for a bad query parameter', async () => {
    const withQuery = unstable().filter((s) => s.query);
    expect(withQuery.length).toBeGreaterThan(0);
    for (const spec of withQuery) {
      // Every unstable list pages with `limit` (the reference's pagination: at least 1).
      expect(Object.keys((spec.query as z.ZodObject).shape), spec.url).toContain('limit');
      const res = await send(spec.method, `${concrete(spec.url)}?limit=0`, projectAuth);
      expect(res.status, spec.url).toBe(400);
      const body = envelope.parse(res.body);
      expect(body.code, spec.url).toBe('invalid_query');
      expect(body.details?.issues?.map((i) => i.path)).toContainEqual(['limit']);
    }
  });

  it('400 invalid_body whose details.issues name the failing field', async () => {
    const withBody = unstable().filter((s) => s.body);
    expect(withBody.length).toBeGreaterThan(0);
    for (const spec of withBody) {
      const shape = objectShape(spec.body!);
      expect(shape, `${spec.method} ${spec.url} declares an object body`).toBeDefined();
      const [field, schema] = Object.entries(shape!)[0]!;
      const res = await send(spec.method, concrete(spec.url), projectAuth, { [field]: refusedValue(schema) });
      const what = `${spec.method} ${spec.url} with a bad ${field}`;
      expect(res.status, what).toBe(400);
      const body = envelope.parse(res.body);
      expect(body.code, what).toBe('invalid_body');
      expect(
        body.details?.issues?.some((i) => i.path[0] === field),
        what,
      ).toBe(true);
    }
  });
});

describe('outside the registered routes', () => {
  it('an unknown path under /api/public/unstable is the envelope too (404 resource_not_found)', async () => {
    const res = await send('GET', '/api/public/unstable/no-such-family', projectAuth);
    expect(res.status).toBe(404);
    expect(envelope.parse(res.body)).toMatchObject({ code: 'resource_not_found' });
  });
});
