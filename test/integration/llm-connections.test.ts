/**
 * LLM connections through `observatory web` on real PostgreSQL and the ClickHouse engine, driven
 * by plain HTTP as any client of the reference's API: the reference's shapes, secrets stored
 * encrypted and never returned, base URLs refused when they reach private or metadata addresses
 * (only 127.0.0.1 is whitelisted here), another project's key changes nothing, and a web or a
 * worker without ENCRYPTION_KEY refuses to start once a connection is stored. Last, the
 * relational migrations 17-18 go down and up again.
 */
import { randomBytes } from 'node:crypto';
import pgLib from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RelationalMigrator } from '../../server/platform/migrations/relational/runner.ts';
import { relationalMigrationsFor } from '../../server/platform/migrations/relational/versions.ts';
import { callJson } from '../fixtures/api-client.ts';
import { freePort } from '../fixtures/ports.ts';
import { cli, createProject, MODE_ENV, type Project } from '../fixtures/service.ts';
import { type ServiceSuite, startServiceSuite, stopServiceSuite } from '../fixtures/service-suite.ts';

let suite: ServiceSuite;
let other: Project;
const KEY = randomBytes(32).toString('hex');

beforeAll(async () => {
  suite = await startServiceSuite({
    project: 'llm-a',
    env: {
      ...MODE_ENV.events_only,
      ENCRYPTION_KEY: KEY,
      SERVICE_LLM_CONNECTION_WHITELISTED_IPS: '127.0.0.1',
    },
  });
  other = await createProject(suite.env, 'llm-b');
});

afterAll(async () => {
  await stopServiceSuite(suite);
});

const call = (method: string, path: string, body?: unknown, p: Project = suite.project) =>
  callJson(suite.web.url, p, method, path, body);

const SECRET = 'sk-test-abcdefghijklmnop-9876';

describe('LLM connections', () => {
  it('upserts on provider, answers the reference shape, and never returns the secret or header values', async () => {
    const put = await call('PUT', '/api/public/llm-connections', {
      provider: 'judge',
      adapter: 'openai',
      secretKey: SECRET,
      baseURL: 'http://127.0.0.1:9/v1',
      customModels: ['smollm2'],
      withDefaultModels: false,
      extraHeaders: { 'x-team': 'header-value-secret' },
    });
    expect(put.status).toBe(200);
    expect(put.body).toEqual({
      id: expect.any(String),
      provider: 'judge',
      adapter: 'openai',
      displaySecretKey: '...9876',
      baseURL: 'http://127.0.0.1:9/v1',
      customModels: ['smollm2'],
      withDefaultModels: false,
      extraHeaderKeys: ['x-team'],
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    expect(put.text).not.toContain('abcdefghijklmnop');
    expect(put.text).not.toContain('header-value-secret');

    const again = await call('PUT', '/api/public/llm-connections', {
      provider: 'judge',
      adapter: 'openai',
      secretKey: `${SECRET}-0000`,
      baseURL: 'http://127.0.0.1:9/v1',
    });
    expect(again.body).toMatchObject({
      id: put.body['id'],
      displaySecretKey: '...0000',
      withDefaultModels: true,
    });

    const list = await call('GET', '/api/public/llm-connections');
    expect(list.body).toEqual({
      data: [again.body],
      meta: { page: 1, limit: 50, totalItems: 1, totalPages: 1 },
    });
    expect(list.text).not.toContain('abcdefghijklmnop');
    expect((await call('GET', '/api/public/llm-connections', undefined, other)).body['data']).toEqual([]);

    const client = new pgLib.Client({ connectionString: suite.pg.url });
    await client.connect();
    try {
      const { rows } = await client.query('SELECT secret_key FROM llm_connections');
      expect(rows).toHaveLength(1);
      expect(rows[0].secret_key).toMatch(/^[0-9a-f]{24}:[0-9a-f]+:[0-9a-f]{32}$/);
      expect(rows[0].secret_key).not.toContain('abcdefghijklmnop');
    } finally {
      await client.end();
    }
  });

  it.each([
    ['http://10.1.2.3/v1', /10\.1\.2\.3, a loopback, private/],
    ['http://169.254.169.254/latest', /169\.254\.169\.254/],
    ['http://[::1]:8080/v1', /::1/],
    ['http://127.0.0.2:9/v1', /127\.0\.0\.2/],
    ['http://metadata.google.internal/v1', /metadata/],
    ['file:///etc/passwd', /must use http or https/],
  ])('refuses the base URL %s, naming it, and stores nothing', async (baseURL, message) => {
    const res = await call('PUT', '/api/public/llm-connections', {
      provider: `bad-${randomBytes(3).toString('hex')}`,
      adapter: 'openai',
      secretKey: 'sk-x',
      baseURL,
    });
    expect(res.status).toBe(400);
    expect(res.body['message']).toMatch(/^baseURL: /);
    expect(res.body['message']).toMatch(message);
    expect((await call('GET', '/api/public/llm-connections')).body['meta']).toMatchObject({ totalItems: 1 });
  });

  it('refuses adapters this service cannot call and malformed bodies with a 400 naming the field', async () => {
    const bedrock = await call('PUT', '/api/public/llm-connections', {
      provider: 'b',
      adapter: 'bedrock',
      secretKey: 'k',
    });
    expect(bedrock.status).toBe(400);
    expect(bedrock.body['message']).toMatch(/^adapter: bedrock is not supported/);
    const noKey = await call('PUT', '/api/public/llm-connections', { provider: 'b', adapter: 'openai' });
    expect(noKey.status).toBe(400);
    expect(JSON.stringify(noKey.body)).toContain('secretKey');
  });

  it('deletes by id within the project only', async () => {
    const [conn] = (await call('GET', '/api/public/llm-connections')).body['data'] as { id: string }[];
    expect((await call('DELETE', `/api/public/llm-connections/${conn!.id}`, undefined, other)).status).toBe(
      404,
    );
    const del = await call('DELETE', `/api/public/llm-connections/${conn!.id}`);
    expect(del).toMatchObject({ status: 200, body: { message: 'LLM connection successfully deleted' } });
    expect((await call('DELETE', `/api/public/llm-connections/${conn!.id}`)).status).toBe(404);
  });

  it('a web or worker without ENCRYPTION_KEY refuses to start once a connection is stored; a malformed key is refused always', async () => {
    await call('PUT', '/api/public/llm-connections', {
      provider: 'kept',
      adapter: 'anthropic',
      secretKey: 'sk-ant',
    });
    const { ENCRYPTION_KEY: _key, ...withoutKey } = suite.env;
    const missing = await cli(
      ['web'],
      { ...withoutKey, HOST: '127.0.0.1', PORT: String(await freePort()) },
      60_000,
    );
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('ENCRYPTION_KEY is required: LLM connections are stored');
    const worker = await cli(
      ['worker'],
      { ...withoutKey, REDIS_URL: 'redis://127.0.0.1:1', HOST: '127.0.0.1', PORT: String(await freePort()) },
      60_000,
    );
    expect(worker.code).toBe(2);
    expect(worker.stderr).toContain(
      'observatory worker: ENCRYPTION_KEY is required: LLM connections are stored',
    );
    const malformed = await cli(['web'], { ...suite.env, ENCRYPTION_KEY: 'xyz' }, 60_000);
    expect(malformed.code).toBe(2);
    expect(malformed.stderr).toContain('ENCRYPTION_KEY must be 64 hex characters');
  });
});

describe('the relational migrations of connections and evaluation', () => {
  it('go down to 16 (tables gone) and up again (tables back, empty)', async () => {
    const pool = new pgLib.Pool({ connectionString: suite.pg.url, max: 1 });
    const tables = async () =>
      (
        await pool.query<{ t: string }>(
          "SELECT table_name AS t FROM information_schema.tables WHERE table_name IN ('llm_connections', 'evaluators', 'evaluation_rules', 'evaluation_rule_evaluators', 'evaluation_executions') ORDER BY 1",
        )
      ).rows.map((r) => r.t);
    try {
      const m = new RelationalMigrator(pool, relationalMigrationsFor('4'));
      const after16 = relationalMigrationsFor('4')
        .map((x) => x.version)
        .filter((v) => v > 16);
      expect(await m.version()).toBe(after16.at(-1));
      expect(await m.down(16)).toEqual([...after16].reverse());
      expect(await tables()).toEqual([]);
      expect(await m.up()).toEqual(after16);
      expect(await tables()).toEqual([
        'evaluation_executions',
        'evaluation_rule_evaluators',
        'evaluation_rules',
        'evaluators',
        'llm_connections',
      ]);
    } finally {
      await pool.end();
    }
  });
});
