import { gzipSync } from 'node:zlib';
import { ROOT_CONTEXT, trace } from '@opentelemetry/api';
import { SeverityNumber } from '@opentelemetry/api-logs';
import { JsonLogsSerializer, ProtobufLogsSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  InMemoryLogRecordExporter,
  LoggerProvider,
  type ReadableLogRecord,
  SimpleLogRecordProcessor,
} from '@opentelemetry/sdk-logs';
import { describe, expect, it } from 'vitest';
import { V4_DEFAULTS } from '../../server/contract/write-modes.ts';
import { filledRows } from '../../server/features/ingestion/genai-fill.ts';
import { decodeLogFile, encodeLogFile } from '../../server/features/ingestion/log/entry.ts';
import { ingestOtlpLogsRequest } from '../../server/features/ingestion/otlp-logs.ts';
import { applyWrites, type IngestionWrite } from '../../server/features/ingestion/write.ts';
import { ProjectPricing } from '../../server/features/models/apply.ts';
import type { ModelCatalog } from '../../server/features/models/catalog.ts';
import { decodeLogsExport } from '../../server/features/otel/decode.ts';
import { type GenAiRecord, genAiContent } from '../../server/features/otel/genai-log-content.ts';
import { levelOfSeverity, mapLogsExport, NO_TRACE_CONTEXT } from '../../server/features/otel/map-logs.ts';
import { logsExportResponseBody } from '../../server/features/otel/otlp-proto.ts';
import type { ExportLogsServiceRequest } from '../../server/features/otel/otlp-types.ts';
import { eventsRow } from '../../server/features/otel/rows.ts';
import { LegacyChanges } from '../../server/features/write-model/changes.ts';
import type { EntityLocks } from '../../server/features/write-model/entity-locks.ts';
import type { Row } from '../../server/features/write-model/records.ts';
import type { IngestionStore } from '../../server/features/write-model/store.ts';
import { memoryStore, memoryTombstones } from '../fixtures/memory-store.ts';

const TRACE = '5b8aa5a2d2c872e8321cf37308d69df2';
const SPAN = '051581bf3cb55c13';
const inSpan = trace.setSpanContext(ROOT_CONTEXT, { traceId: TRACE, spanId: SPAN, traceFlags: 1 });

/** Records as the OpenTelemetry JS logs SDK makes them: a model call's legacy events and a plain warning. */
function sdkRecords(): ReadableLogRecord[] {
  const exporter = new InMemoryLogRecordExporter();
  const provider = new LoggerProvider({
    resource: resourceFromAttributes({ 'service.name': 'chat-app' }),
    processors: [new SimpleLogRecordProcessor({ exporter })],
  });
  const logger = provider.getLogger('opentelemetry.instrumentation.openai_v2', '2.4b0');
  const t = (ms: number) => new Date(Date.UTC(2026, 2, 2, 10, 0, 0, ms));
  logger.emit({
    eventName: 'gen_ai.system.message',
    timestamp: t(1),
    context: inSpan,
    body: { content: 'Answer briefly.' },
  });
  logger.emit({
    eventName: 'gen_ai.user.message',
    timestamp: t(2),
    context: inSpan,
    body: { content: 'Capital of France?' },
  });
  logger.emit({
    eventName: 'gen_ai.choice',
    timestamp: t(3),
    context: inSpan,
    body: { index: 0, finish_reason: 'stop', message: { content: 'Paris.' } },
  });
  logger.emit({
    timestamp: t(4),
    context: inSpan,
    severityNumber: SeverityNumber.WARN,
    severityText: 'WARN',
    body: 'retrying once',
    attributes: { attempt: 2 },
  });
  logger.emit({ timestamp: t(5), severityNumber: SeverityNumber.INFO, body: 'no span here' });
  return exporter.getFinishedLogRecords();
}

/** One export's body: decoding it again is what an exporter's retry makes the server do. */
const EXPORT_BODY = Buffer.from(ProtobufLogsSerializer.serializeRequest(sdkRecords())!);
const decoded = (): ExportLogsServiceRequest =>
  decodeLogsExport(EXPORT_BODY, 'application/x-protobuf', undefined);

describe('decodeLogsExport', () => {
  it('reads the SDK protobuf, JSON and gzip encodings into one shape', () => {
    const records = sdkRecords();
    const proto = Buffer.from(ProtobufLogsSerializer.serializeRequest(records)!);
    const json = Buffer.from(JsonLogsSerializer.serializeRequest(records)!);
    const fromProto = decodeLogsExport(proto, 'application/x-protobuf', undefined);
    expect(decodeLogsExport(json, 'application/json', undefined)).toEqual(fromProto);
    expect(decodeLogsExport(gzipSync(proto), 'application/x-protobuf', 'gzip')).toEqual(fromProto);
    const first = fromProto.resourceLogs[0]!.scopeLogs[0]!.logRecords[0]!;
    expect(first).toMatchObject({
      traceId: TRACE,
      spanId: SPAN,
      eventName: 'gen_ai.system.message',
      body: { kvlistValue: { values: [{ key: 'content', value: { stringValue: 'Answer briefly.' } }] } },
    });
    expect(fromProto.resourceLogs[0]!.scopeLogs[0]!.logRecords[4]).toMatchObject({ traceId: '', spanId: '' });
  });

  it('takes severity numbers by name in OTLP/JSON', () => {
    const body = JSON.stringify({
      resourceLogs: [{ scopeLogs: [{ logRecords: [{ severityNumber: 'SEVERITY_NUMBER_ERROR2' }] }] }],
    });
    const r = decodeLogsExport(Buffer.from(body), 'application/json', undefined);
    expect(r.resourceLogs[0]!.scopeLogs[0]!.logRecords[0]!.severityNumber).toBe(18);
  });
});

describe('mapLogsExport', () => {
  const mapped = mapLogsExport(decoded(), { now: new Date(Date.UTC(2026, 2, 2)) });

  it('makes each record with trace context an EVENT of its span, level from severity', () => {
    expect(
      mapped.events.map((e) => [e.name, e.type, e.traceId, e.parentSpanId, e.level, e.input, e.startTime]),
    ).toEqual([
      [
        'gen_ai.system.message',
        'EVENT',
        TRACE,
        SPAN,
        'DEFAULT',
        '{"content":"Answer briefly."}',
        '2026-03-02T10:00:00.001000Z',
      ],
      [
        'gen_ai.user.message',
        'EVENT',
        TRACE,
        SPAN,
        'DEFAULT',
        '{"content":"Capital of France?"}',
        '2026-03-02T10:00:00.002000Z',
      ],
      [
        'gen_ai.choice',
        'EVENT',
        TRACE,
        SPAN,
        'DEFAULT',
        '{"index":0,"finish_reason":"stop","message":{"content":"Paris."}}',
        '2026-03-02T10:00:00.003000Z',
      ],
      ['WARN', 'EVENT', TRACE, SPAN, 'WARNING', 'retrying once', '2026-03-02T10:00:00.004000Z'],
    ]);
    expect(mapped.events[3]!.metadata).toMatchObject({ attributes: '{"attempt":2}', severity: 'WARN' });
    expect(mapped.events[0]!.instrumentation).toMatchObject({
      serviceName: 'chat-app',
      scopeName: 'opentelemetry.instrumentation.openai_v2',
    });
  });

  it('gives every record its own id, the same when the export is sent again', () => {
    const again = mapLogsExport(decoded(), {});
    expect(again.events.map((e) => e.spanId)).toEqual(mapped.events.map((e) => e.spanId));
    expect(new Set(mapped.events.map((e) => e.spanId)).size).toBe(4);
  });

  it('refuses a record without trace context, on its own', () => {
    expect(mapped.rejected).toBe(1);
    expect(mapped.firstRefusal).toBe(NO_TRACE_CONTEXT);
  });

  it("gives the span the content of its model call's events", () => {
    expect(mapped.contents).toEqual([
      {
        traceId: TRACE,
        spanId: SPAN,
        at: '2026-03-02T10:00:00.001000Z',
        environment: 'default',
        content: {
          input: JSON.stringify([
            { role: 'system', content: 'Answer briefly.' },
            { role: 'user', content: 'Capital of France?' },
          ]),
          output: JSON.stringify({ role: 'assistant', content: 'Paris.', finish_reason: 'stop' }),
          toolCalls: [],
          toolCallNames: [],
        },
      },
    ]);
  });

  it.each([
    [0, 'DEFAULT'],
    [1, 'DEBUG'],
    [8, 'DEBUG'],
    [9, 'DEFAULT'],
    [12, 'DEFAULT'],
    [13, 'WARNING'],
    [16, 'WARNING'],
    [17, 'ERROR'],
    [24, 'ERROR'],
  ] as const)('severity %i is level %s', (severity, level) => {
    expect(levelOfSeverity(severity)).toBe(level);
  });
});

const rec = (name: string, ns: number, body: unknown, attributes: GenAiRecord['attributes'] = {}) => ({
  name,
  timeUnixNano: String(ns),
  body,
  attributes,
});

describe('genAiContent', () => {
  it.each<[string, GenAiRecord[], ReturnType<typeof genAiContent>]>([
    ['no GenAI content event', [rec('log', 1, 'hello')], null],
    [
      'legacy events with a tool call (OpenAI tool_calls)',
      [
        rec('gen_ai.choice', 3, {
          index: 0,
          finish_reason: 'tool_calls',
          message: {
            tool_calls: [
              {
                id: 'call_1',
                type: 'function',
                function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
              },
            ],
          },
        }),
        rec('gen_ai.user.message', 1, { content: 'Weather in Paris?' }),
        rec('gen_ai.tool.message', 2, { id: 'call_0', content: 'sunny' }),
      ],
      {
        input: JSON.stringify([
          { role: 'user', content: 'Weather in Paris?' },
          { role: 'tool', id: 'call_0', content: 'sunny' },
        ]),
        output: JSON.stringify({
          role: 'assistant',
          tool_calls: [
            {
              id: 'call_1',
              type: 'function',
              function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
            },
          ],
          finish_reason: 'tool_calls',
        }),
        toolCalls: [JSON.stringify({ id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' })],
        toolCallNames: ['get_weather'],
      },
    ],
    [
      'operation details: structured messages, system instructions in front, tool_call parts',
      [
        rec('gen_ai.client.inference.operation.details', 5, null, {
          'gen_ai.system_instructions': [{ type: 'text', content: 'Be brief.' }],
          'gen_ai.input.messages': [{ role: 'user', parts: [{ type: 'text', content: 'Weather?' }] }],
          'gen_ai.output.messages': [
            {
              role: 'assistant',
              parts: [{ type: 'tool_call', id: 'c1', name: 'get_weather', arguments: { city: 'Paris' } }],
              finish_reason: 'tool_call',
            },
          ],
        }),
      ],
      {
        input: JSON.stringify([
          { role: 'system', content: 'Be brief.' },
          { role: 'user', parts: [{ type: 'text', content: 'Weather?' }] },
        ]),
        output: JSON.stringify([
          {
            role: 'assistant',
            parts: [{ type: 'tool_call', id: 'c1', name: 'get_weather', arguments: { city: 'Paris' } }],
            finish_reason: 'tool_call',
          },
        ]),
        toolCalls: [JSON.stringify({ id: 'c1', name: 'get_weather', arguments: { city: 'Paris' } })],
        toolCallNames: ['get_weather'],
      },
    ],
    [
      'operation details as JSON text (SDKs without structured attributes)',
      [
        rec('gen_ai.client.inference.operation.details', 5, null, {
          'gen_ai.input.messages': '[{"role":"user","parts":[{"type":"text","content":"Hi"}]}]',
          'gen_ai.output.messages': '[{"role":"assistant","parts":[{"type":"text","content":"Hello"}]}]',
        }),
      ],
      {
        input: '[{"role":"user","parts":[{"type":"text","content":"Hi"}]}]',
        output: '[{"role":"assistant","parts":[{"type":"text","content":"Hello"}]}]',
        toolCalls: [],
        toolCallNames: [],
      },
    ],
  ])('%s', (_name, records, expected) => {
    expect(genAiContent(records)).toEqual(expected);
    expect(genAiContent([...records].reverse())).toEqual(expected);
  });
});

describe('filledRows', () => {
  const mappedEvents = mapLogsExport(decoded(), {});
  const attribution = { apiKey: 'pk', sdkName: 'unknown', sdkVersion: 'unknown' };
  const eventRows = mappedEvents.events.map((e) => eventsRow(e, 'p1', attribution, Date.UTC(2026, 2, 2, 10)));
  const span = {
    project_id: 'p1',
    trace_id: TRACE,
    span_id: SPAN,
    type: 'GENERATION',
    input: '',
    output: '',
    tool_calls: [],
    tool_call_names: [],
    event_ts: '2026-03-02 10:00:01.000000',
  };

  it("writes the span again with its records' content, as a newer version", () => {
    const [row] = filledRows([span], eventRows, Date.UTC(2026, 2, 2, 10));
    expect(row).toMatchObject({
      span_id: SPAN,
      input: mappedEvents.contents[0]!.content.input,
      output: mappedEvents.contents[0]!.content.output,
      event_ts: '2026-03-02 10:00:01.001000',
    });
  });

  it('writes nothing when the span already has that content, or has no GenAI records', () => {
    const [row] = filledRows([span], eventRows, Date.UTC(2026, 2, 2, 10));
    expect(filledRows([row!], eventRows, Date.UTC(2026, 2, 2, 11))).toEqual([]);
    expect(filledRows([span], eventRows.slice(3), Date.UTC(2026, 2, 2, 11))).toEqual([]);
  });
});

describe('logsExportResponseBody', () => {
  it('answers partial success in either encoding', () => {
    expect(logsExportResponseBody(false, { rejectedLogRecords: 1, errorMessage: 'x' })).toEqual({
      partialSuccess: { rejectedLogRecords: '1', errorMessage: 'x' },
    });
    expect(logsExportResponseBody(false, null)).toEqual({});
    expect((logsExportResponseBody(true, null) as Buffer).length).toBe(0);
  });
});

/** Writes of one entity are applied one after another here: no lock is needed. */
const locks: EntityLocks = { hold: (_keys, work) => work() };

describe('a span and its GenAI log events in the events tables, through the ingestion log file format', () => {
  const attribution = { apiKey: 'pk', sdkName: 'unknown', sdkVersion: 'unknown' };
  const targets = { legacy: false, staging: false, events: true };
  const logs = mapLogsExport(decoded(), {});
  const spanRow = {
    ...eventsRow(logs.events[0]!, 'p1', attribution, Date.UTC(2026, 2, 2, 10)),
    span_id: SPAN,
    parent_span_id: '',
    type: 'GENERATION',
    name: 'chat',
    input: '',
    output: '',
  };
  const write = (events: Row[], receivedAt: number): IngestionWrite => ({
    projectId: 'p1',
    receivedAt,
    attribution,
    targets,
    virtualRoots: false,
    changes: new LegacyChanges(),
    scores: [],
    events,
    fills: [{ traceId: TRACE, spanId: SPAN }],
  });
  const logsWrite = write(
    logs.events.map((e) => eventsRow(e, 'p1', attribution, Date.UTC(2026, 2, 2, 10))),
    Date.UTC(2026, 2, 2, 10),
  );
  const spanWrite = write([spanRow], Date.UTC(2026, 2, 2, 10));

  it.each([
    ['logs first', [logsWrite, spanWrite]],
    ['span first', [spanWrite, logsWrite]],
  ])('%s: the span ends with the content', async (_name, writes) => {
    const { store, rows } = memoryStore();
    const { tombstones } = memoryTombstones();
    for (const w of writes)
      await applyWrites(decodeLogFile(encodeLogFile([w])), { store, locks, tombstones });
    const spans = rows('events_full').filter((r) => r['span_id'] === SPAN);
    expect(spans.at(-1)).toMatchObject({
      input: logs.contents[0]!.content.input,
      output: logs.contents[0]!.content.output,
    });
  });
});

describe('ingestOtlpLogsRequest (the entry a transport calls with a decoded request)', () => {
  const settings = { release: '4', ...V4_DEFAULTS } as const;
  const context = (store: IngestionStore) => ({
    projectId: 'p1',
    settings,
    attribution: { apiKey: 'pk', sdkName: 'unknown', sdkVersion: 'unknown' },
    store,
    locks,
    tombstones: memoryTombstones().tombstones,
    // No definitions: log records name no model, and nothing is priced.
    models: { pricingFor: async () => new ProjectPricing([]) } as unknown as ModelCatalog,
    onDualPath: () => {},
  });

  it('writes the records as events of their span and answers the partial success', async () => {
    const { store, rows } = memoryStore();
    const outcome = await ingestOtlpLogsRequest(decoded(), {}, context(store));
    expect(outcome).toEqual({
      kind: 'written',
      count: 4,
      rejected: {
        records: 1,
        message: `1 of 5 log records rejected (the others were stored); the first: ${NO_TRACE_CONTEXT}`,
      },
    });
    expect(rows('events_full').map((r) => [r['type'], r['parent_span_id'], r['name']])).toEqual([
      ['EVENT', SPAN, 'gen_ai.system.message'],
      ['EVENT', SPAN, 'gen_ai.user.message'],
      ['EVENT', SPAN, 'gen_ai.choice'],
      ['EVENT', SPAN, 'WARN'],
    ]);
  });

  it('refuses an export whose every record lacks trace context', async () => {
    const { store, rows } = memoryStore();
    const request = decoded();
    const scope = request.resourceLogs[0]!.scopeLogs[0]!;
    scope.logRecords = scope.logRecords.slice(4);
    const outcome = await ingestOtlpLogsRequest(request, {}, context(store));
    expect(outcome).toMatchObject({ kind: 'refused', status: 400 });
    expect(rows('events_full')).toEqual([]);
  });
});
