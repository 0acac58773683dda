/**
 * OTLP over gRPC on the web's own port (SERVICE_OTLP_GRPC_PORT), with real producers: the
 * OpenTelemetry JS gRPC trace and log exporters, unchanged, and a plain grpc-js client for the exports no
 * SDK sends (a span refused on its own, a key of another kind). The web runs in the version 4
 * default mode on real PostgreSQL and the ClickHouse engine behind `analytics-server`; what was
 * stored is read back through the public API, per project.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, credentials, status } from '@grpc/grpc-js';
import type { ExportResult } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-grpc';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_MAX_DECODED_BYTES } from '../../server/features/otel/decode.ts';
import {
  exportTraceServiceRequestType,
  exportTraceServiceResponseType,
} from '../../server/features/otel/otlp-proto.ts';
import { eventually } from '../conformance/env.ts';
import { grpcAuth, rawGrpcExport } from '../fixtures/grpc-export.ts';
import { type Body, callApi } from '../fixtures/mode-webs.ts';
import { CHAT_QUESTION, chatEvents, chatEventsOf, sendChat } from '../fixtures/otel-producers.ts';
import { runCommand } from '../fixtures/processes.ts';
import { basicAuth, MODE_ENV, type Project, startWeb, type WebWithGrpc } from '../fixtures/service.ts';
import { type ServiceSuite, startServiceSuite, stopServiceSuite } from '../fixtures/service-suite.ts';

let suite: ServiceSuite;
/** A second web whose gRPC port takes TLS from a certificate made here for 127.0.0.1. */
let tlsWeb: WebWithGrpc;
let tlsDir: string;
let alpha: Project;
let beta: Project;

beforeAll(async () => {
  suite = await startServiceSuite({
    project: 'grpc-alpha',
    others: ['grpc-beta'],
    env: MODE_ENV.events_only,
  });
  [alpha, beta] = [suite.project, suite.others[0]!];
  tlsDir = mkdtempSync(join(tmpdir(), 'otlp-grpc-tls-'));
  await runCommand('openssl', 'openssl', [
    ...['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=127.0.0.1'],
    ...['-addext', 'subjectAltName=IP:127.0.0.1'],
    ...['-keyout', join(tlsDir, 'key.pem'), '-out', join(tlsDir, 'cert.pem')],
  ]);
  tlsWeb = await startWeb({
    ...suite.env,
    SERVICE_OTLP_GRPC_TLS_CERT_FILE: join(tlsDir, 'cert.pem'),
    SERVICE_OTLP_GRPC_TLS_KEY_FILE: join(tlsDir, 'key.pem'),
  });
});

afterAll(async () => {
  await stopServiceSuite(suite, tlsWeb);
  if (tlsDir) rmSync(tlsDir, { recursive: true, force: true });
});

/** The exporters' CompressionAlgorithm.GZIP (its enum lives in a package they do not re-export). */
const GZIP = 'gzip' as NonNullable<
  NonNullable<ConstructorParameters<typeof OTLPTraceExporter>[0]>['compression']
>;

/** One span named `name` handed to the OTel JS gRPC exporter; resolves to its trace id and the export's result. */
async function sendSpan(
  name: string,
  authorization: string,
  opts: { gzip?: boolean; tls?: { address: string; ca: Buffer } } = {},
) {
  const recorded = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'grpc-app' }),
    spanProcessors: [new SimpleSpanProcessor(recorded)],
  });
  const span = provider.getTracer('grpc-app').startSpan(name, {
    attributes: { 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'gpt-4o-mini' },
  });
  span.end();
  await provider.forceFlush();
  const exporter = new OTLPTraceExporter({
    url: opts.tls ? `https://${opts.tls.address}` : `http://${suite.web.grpcAddress}`,
    metadata: grpcAuth(authorization),
    ...(opts.tls ? { credentials: credentials.createSsl(opts.tls.ca) } : {}),
    ...(opts.gzip ? { compression: GZIP } : {}),
  });
  const result = await new Promise<ExportResult>((resolve) =>
    exporter.export(recorded.getFinishedSpans(), resolve),
  );
  await exporter.shutdown();
  await provider.shutdown();
  return { traceId: span.spanContext().traceId, result };
}

async function observationsOf(p: Project, traceId: string): Promise<Body[]> {
  const r = await callApi(
    suite.web,
    p,
    'GET',
    `/api/public/v2/observations?traceId=${traceId}&fields=core,basic`,
  );
  return (r.body.data ?? []) as Body[];
}

const readBack = (p: Project, traceId: string, count: number) =>
  eventually(
    `${count} observation(s) of ${traceId}`,
    async () => {
      const data = await observationsOf(p, traceId);
      return data.length === count ? data : undefined;
    },
    30_000,
  );

/** A raw TraceService/Export call: bytes in, the status and the decoded answer out. */
const rawExport = (authorization: string | undefined, body: Uint8Array) =>
  rawGrpcExport(
    suite.web.grpcAddress,
    '/opentelemetry.proto.collector.trace.v1.TraceService/Export',
    exportTraceServiceResponseType(),
    authorization,
    body,
  );

const hex = (n: number, bytes: number) => Buffer.from(n.toString(16).padStart(bytes * 2, '0'), 'hex');

function traceExport(spans: { traceId: Buffer; spanId: Buffer; name: string }[]): Uint8Array {
  const type = exportTraceServiceRequestType();
  const nowNs = BigInt(Date.now()) * 1_000_000n;
  return type
    .encode(
      type.fromObject({
        resourceSpans: [
          {
            resource: { attributes: [{ key: 'service.name', value: { stringValue: 'raw-client' } }] },
            scopeSpans: [
              {
                scope: { name: 'raw' },
                spans: spans.map((s) => ({
                  ...s,
                  kind: 1,
                  startTimeUnixNano: String(nowNs),
                  endTimeUnixNano: String(nowNs + 1_000_000n),
                })),
              },
            ],
          },
        ],
      }),
    )
    .finish();
}

describe('TraceService over gRPC', () => {
  it('stores the spans of the JS gRPC exporter in the key’s project, and only there', async () => {
    const { traceId, result } = await sendSpan('chat over grpc', basicAuth(alpha));
    expect(result.code).toBe(0);
    const [o] = await readBack(alpha, traceId, 1);
    expect(o).toMatchObject({ traceId, name: 'chat over grpc', type: 'GENERATION' });
    expect(await observationsOf(beta, traceId)).toEqual([]);
  });

  it('takes gzip-compressed exports (grpc-encoding: gzip)', async () => {
    const { traceId, result } = await sendSpan('gzipped', basicAuth(beta), { gzip: true });
    expect(result.code).toBe(0);
    const [o] = await readBack(beta, traceId, 1);
    expect(o).toMatchObject({ traceId, name: 'gzipped' });
    expect(await observationsOf(alpha, traceId)).toEqual([]);
  });

  it('refuses a missing or wrong key with UNAUTHENTICATED and stores nothing', async () => {
    const wrong = basicAuth({ ...alpha, secretKey: 'sk-wrong' });
    const { traceId, result } = await sendSpan('never stored', wrong);
    expect(result.code).toBe(1);
    expect((result.error as { code?: number } | undefined)?.code).toBe(status.UNAUTHENTICATED);
    const body = traceExport([{ traceId: hex(7, 16), spanId: hex(7, 8), name: 'no key' }]);
    const missing = await rawExport(undefined, body);
    expect(missing).toMatchObject({ code: status.UNAUTHENTICATED });
    expect(missing.details).toContain('authorization: Basic');
    expect(await rawExport(wrong, body)).toMatchObject({
      code: status.UNAUTHENTICATED,
      details: 'Authentication error: invalid API key',
    });
    // The accepted exports above prove the path works; these two left nothing behind.
    expect(await observationsOf(alpha, traceId)).toEqual([]);
    expect(await observationsOf(alpha, hex(7, 16).toString('hex'))).toEqual([]);
  });

  it('answers partial success for a span refused on its own and stores the others', async () => {
    const traceId = hex(0xabc, 16);
    const answer = await rawExport(
      basicAuth(alpha),
      traceExport([
        { traceId, spanId: hex(1, 8), name: 'kept' },
        { traceId: Buffer.alloc(16), spanId: hex(2, 8), name: 'zero trace id' },
      ]),
    );
    expect(answer.code).toBe(status.OK);
    expect(answer.answer).toEqual({
      partialSuccess: {
        rejectedSpans: 1,
        errorMessage: expect.stringContaining('traceId is not a valid trace id'),
      },
    });
    const stored = await readBack(alpha, traceId.toString('hex'), 1);
    expect(stored.map((o) => o['name'])).toEqual(['kept']);
  });

  it('refuses a malformed export with INVALID_ARGUMENT', async () => {
    const answer = await rawExport(basicAuth(alpha), Buffer.from([0xff, 0xff, 0xff]));
    expect(answer.code).toBe(status.INVALID_ARGUMENT);
    expect(answer.details).toContain('Failed to parse OTel Protobuf Trace');
  });

  it('takes logs from the OTel JS gRPC log exporter: GenAI events fill their span, others are its events', async () => {
    const { traceId, spanId } = await sendChat(suite.web, alpha, false, suite.web.grpcAddress);
    const data = await eventually(
      `the chat of ${traceId} with its content`,
      async () => {
        const r = await callApi(
          suite.web,
          alpha,
          'GET',
          `/api/public/v2/observations?traceId=${traceId}&fields=core,basic,io`,
        );
        const all = (r.body.data ?? []) as Body[];
        return all.length === 4 && all.some((o) => o['id'] === spanId && o['input']) ? all : undefined;
      },
      30_000,
    );
    const chat = data.find((o) => o['id'] === spanId)!;
    expect(chat).toMatchObject({ type: 'GENERATION' });
    expect(JSON.stringify(chat['input'])).toContain(CHAT_QUESTION);
    expect(chatEventsOf(data)).toEqual(chatEvents(spanId));
    // Nothing of it in the other project.
    expect(await observationsOf(beta, traceId)).toEqual([]);
  });
});

describe('the limits and TLS of the gRPC port', () => {
  it('refuses a message past the decoded-size limit with RESOURCE_EXHAUSTED', async () => {
    const answer = await rawExport(basicAuth(alpha), Buffer.alloc(DEFAULT_MAX_DECODED_BYTES + 1024, 0));
    expect(answer.code).toBe(status.RESOURCE_EXHAUSTED);
  });

  it('serves TLS from the configured certificate and key, and nothing in plaintext there', async () => {
    const ca = readFileSync(join(tlsDir, 'cert.pem'));
    const { traceId, result } = await sendSpan('over tls', basicAuth(alpha), {
      gzip: true,
      tls: { address: tlsWeb.grpcAddress, ca },
    });
    expect(result.code).toBe(0);
    const [o] = await readBack(alpha, traceId, 1);
    expect(o).toMatchObject({ traceId, name: 'over tls' });
    const plain = await new Promise<number | undefined>((resolve) => {
      const client = new Client(tlsWeb.grpcAddress, credentials.createInsecure());
      client.makeUnaryRequest(
        '/opentelemetry.proto.collector.trace.v1.TraceService/Export',
        (b: Buffer) => b,
        (b: Buffer) => b,
        Buffer.alloc(0),
        grpcAuth(basicAuth(alpha)),
        { deadline: Date.now() + 5_000 },
        (err) => {
          client.close();
          resolve(err?.code);
        },
      );
    });
    expect(plain).toBe(status.UNAVAILABLE);
  });
});
