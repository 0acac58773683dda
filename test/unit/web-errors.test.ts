/**
 * The error hierarchy and the one error handler: which failures mean "a store is down" (503,
 * retry), which are the client's (4xx naming the field), and that a bug is 500 without leaking.
 * Store failures come from the real clients (pg, @clickhouse/client, ioredis) against a closed
 * loopback port, next to the shapes those clients document.
 */
import { createServer } from 'node:net';
import { Writable } from 'node:stream';
import { ClickHouseLogLevel, createClient } from '@clickhouse/client';
import Fastify, { type FastifyBaseLogger } from 'fastify';
import { Redis } from 'ioredis';
import pg from 'pg';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { handleError } from '../../server/app/web/core/error-handler.ts';
import {
  BadRequest,
  Conflict,
  Forbidden,
  HttpError,
  isStoreUnavailable,
  NotFound,
  PayloadTooLarge,
  ServiceUnavailable,
  TooManyRequests,
  Unauthorized,
} from '../../server/kernel/errors.ts';
import { collectRouteSpecs, route } from '../../server/platform/http/route.ts';

const withProps = (message: string, props: Record<string, unknown>) =>
  Object.assign(new Error(message), props);

describe('isStoreUnavailable', () => {
  it.each([
    ['refused connection', withProps('connect ECONNREFUSED 127.0.0.1:5432', { code: 'ECONNREFUSED' }), true],
    ['reset connection', withProps('read ECONNRESET', { code: 'ECONNRESET' }), true],
    ['socket timeout', withProps('connect ETIMEDOUT', { code: 'ETIMEDOUT' }), true],
    ['unknown host', withProps('getaddrinfo ENOTFOUND db', { code: 'ENOTFOUND' }), true],
    [
      'pg admin shutdown',
      withProps('terminating connection due to administrator command', { code: '57P01' }),
      true,
    ],
    ['pg cannot connect now', withProps('the database system is starting up', { code: '57P03' }), true],
    ['pg connection failure', withProps('connection failure', { code: '08006' }), true],
    ['pg too many connections', withProps('sorry, too many clients already', { code: '53300' }), true],
    [
      'pg lock wait past lock_timeout',
      withProps('canceling statement due to lock timeout', { code: '55P03' }),
      true,
    ],
    ['pg deadlock victim', withProps('deadlock detected', { code: '40P01' }), true],
    ['pg terminated', new Error('Connection terminated unexpectedly'), true],
    ['pg-pool connect timeout', new Error('timeout exceeded when trying to connect'), true],
    ['clickhouse request timeout', new Error('Timeout error.'), true],
    [
      'clickhouse busy',
      withProps('Too many simultaneous queries', { type: 'TOO_MANY_SIMULTANEOUS_QUERIES', code: '202' }),
      true,
    ],
    [
      'clickhouse query timeout',
      withProps('Timeout exceeded', { type: 'TIMEOUT_EXCEEDED', code: '159' }),
      true,
    ],
    ['redis closed', new Error('Connection is closed.'), true],
    [
      'redis retries exhausted',
      Object.assign(new Error('Reached the max retries per request limit'), {
        name: 'MaxRetriesPerRequestError',
      }),
      true,
    ],
    ['cause chain', new Error('insert failed', { cause: withProps('x', { code: 'ECONNREFUSED' }) }), true],
    [
      'aggregate of addresses',
      new AggregateError([withProps('a', { code: 'ECONNREFUSED' })], 'connect failed'),
      true,
    ],
    ['pg syntax error', withProps('syntax error at or near "SELEC"', { code: '42601' }), false],
    ['pg unique violation', withProps('duplicate key value', { code: '23505' }), false],
    [
      'clickhouse unknown table',
      withProps("Table default.x doesn't exist", { type: 'UNKNOWN_TABLE', code: '60' }),
      false,
    ],
    ['a bug', new TypeError("Cannot read properties of undefined (reading 'id')"), false],
    ['an HttpError', new ServiceUnavailable('busy', 1), false],
    ['not an error', 'ECONNREFUSED', false],
    ['undefined', undefined, false],
  ] as const)('%s -> %s', (_, err, expected) => {
    expect(isStoreUnavailable(err)).toBe(expected);
  });

  async function closedPort(): Promise<number> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    await new Promise((resolve) => server.close(resolve));
    return port;
  }

  it('recognises what the real clients throw when their store is not there', async () => {
    const port = await closedPort();
    const pgError = await new pg.Client({ host: '127.0.0.1', port, user: 'x', database: 'x' })
      .connect()
      .catch((e: unknown) => e);
    const ch = createClient({
      url: `http://127.0.0.1:${port}`,
      request_timeout: 5_000,
      log: { level: ClickHouseLogLevel.OFF },
    });
    const chError = await ch.query({ query: 'SELECT 1' }).catch((e: unknown) => e);
    await ch.close();
    const redis = new Redis({
      host: '127.0.0.1',
      port,
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    redis.on('error', () => {}); // the rejected connect() below carries the error
    const redisError = await redis.connect().catch((e: unknown) => e);
    redis.disconnect();
    for (const err of [pgError, chError, redisError]) {
      expect(err).toBeInstanceOf(Error);
      expect(isStoreUnavailable(err), String(err)).toBe(true);
    }
  });
});

describe('the HttpError kinds', () => {
  it.each([
    [new BadRequest('b'), 400],
    [new Unauthorized('u'), 401],
    [new Forbidden('f'), 403],
    [new NotFound('n'), 404],
    [new Conflict('c'), 409],
    [new PayloadTooLarge('p'), 413],
    [new TooManyRequests('t', 1), 429],
    [new ServiceUnavailable('s', 5), 503],
  ] as const)('%s answers %i', (err, status) => {
    expect(err).toBeInstanceOf(HttpError);
    expect(err.statusCode).toBe(status);
  });
});

describe('the error handler', () => {
  function appWithLog() {
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
        done();
      },
    });
    const app = Fastify({ loggerInstance: pino(sink) as FastifyBaseLogger, bodyLimit: 1024 });
    app.setErrorHandler(handleError);
    collectRouteSpecs(app);
    route(
      app,
      {
        method: 'POST',
        url: '/items',
        tag: 't',
        summary: 's',
        body: z.object({ name: z.string(), size: z.number() }),
      },
      async ({ body }) => ({ name: body.name }),
    );
    app.get('/conflict', async () => {
      throw new Conflict('item exists', 'name: already taken');
    });
    app.get('/busy', async () => {
      throw new ServiceUnavailable('busy', 7);
    });
    app.get('/store-down', async () => {
      throw withProps('connect ECONNREFUSED 127.0.0.1:8123', { code: 'ECONNREFUSED' });
    });
    app.post('/store-down', async () => {
      throw new Error('Connection terminated unexpectedly');
    });
    app.get('/bug', async () => {
      throw new Error('secret sk-obs-123 in postgres://user:pw@db/x');
    });
    return { app, lines };
  }

  it('a bad request is 400 and names the field', async () => {
    const { app } = appWithLog();
    const res = await app.inject({ method: 'POST', url: '/items', payload: { name: 'a', size: 'big' } });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ message: 'Invalid request data', error: expect.stringContaining('size') });
  });

  it('an HttpError answers its status, its message and its details', async () => {
    const { app } = appWithLog();
    const conflict = await app.inject({ url: '/conflict' });
    expect([conflict.statusCode, conflict.json()]).toEqual([
      409,
      { message: 'item exists', error: 'name: already taken' },
    ]);
    const busy = await app.inject({ url: '/busy' });
    expect([busy.statusCode, busy.headers['retry-after']]).toEqual([503, '7']);
  });

  it("Fastify's own client errors stay 4xx", async () => {
    const { app } = appWithLog();
    const json = { 'content-type': 'application/json' };
    const malformed = await app.inject({ method: 'POST', url: '/items', headers: json, payload: '{"name":' });
    expect(malformed.statusCode).toBe(400);
    const tooLarge = await app.inject({
      method: 'POST',
      url: '/items',
      headers: json,
      payload: JSON.stringify({ name: 'x'.repeat(2048) }),
    });
    expect(tooLarge.statusCode).toBe(413);
    const badType = await app.inject({
      method: 'POST',
      url: '/items',
      headers: { 'content-type': 'text/csv' },
      payload: 'a,b',
    });
    expect(badType.statusCode).toBe(415);
  });

  it('a store that is down is 503 with Retry-After; a write says nothing was acknowledged', async () => {
    const { app } = appWithLog();
    const read = await app.inject({ url: '/store-down' });
    expect(read.statusCode).toBe(503);
    expect(read.headers['retry-after']).toBeDefined();
    expect(read.body).not.toContain('8123');
    const write = await app.inject({ method: 'POST', url: '/store-down' });
    expect(write.statusCode).toBe(503);
    expect(write.json().message).toMatch(/nothing was acknowledged/);
  });

  it('a bug is 500 "internal error", logged, and its text is not echoed', async () => {
    const { app, lines } = appWithLog();
    const res = await app.inject({ url: '/bug' });
    expect(res.statusCode).toBe(500);
    expect(res.json()).toEqual({ message: 'internal error' });
    const logged = lines.find((l) => l['msg'] === 'request failed');
    expect((logged?.['err'] as { message?: string } | undefined)?.message).toContain('sk-obs-123');
  });
});
