/**
 * OTLP logs over HTTP from the real OpenTelemetry JS SDKs (traces and logs, protobuf exporters) to
 * `observatory web` in every write mode: a model call's GenAI log events fill its generation's
 * input, output and tool calls whether they arrive before or after the span; other records are
 * events of their span at the level of their severity; a record without trace context is refused
 * on its own (partial success). Read back through the public observations APIs: v1 (legacy tables)
 * where the mode writes them, v2 (events tables) where it writes those.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { eventually } from '../conformance/env.ts';
import { type Body, callApi, MODES, modeWebsForSuite } from '../fixtures/mode-webs.ts';
import {
  CHAT_QUESTION,
  CHAT_TOOL_CALL,
  chatEvents,
  chatEventsOf,
  sendChat,
} from '../fixtures/otel-producers.ts';
import { basicAuth, type Mode } from '../fixtures/service.ts';

const s = modeWebsForSuite('otel-logs');

const EXPECTED_INPUT = [{ role: 'user', content: CHAT_QUESTION }];
const EXPECTED_OUTPUT = { role: 'assistant', tool_calls: [CHAT_TOOL_CALL], finish_reason: 'tool_calls' };
const json = (v: unknown) => (typeof v === 'string' ? JSON.parse(v) : v);

/** The trace's observations through Observations API v2 once the generation has its content. */
function readV2(mode: Mode, traceId: string, spanId: string) {
  return eventually(
    `v2 observations of ${traceId} (${mode})`,
    async () => {
      const r = await callApi(
        s.webs[mode],
        s.projects[mode],
        'GET',
        `/api/public/v2/observations?traceId=${traceId}&fields=core,basic,io`,
      );
      const data = (r.body.data ?? []) as Body[];
      const generation = data.find((o) => o['id'] === spanId);
      return data.length === 4 && generation?.['output'] ? data : undefined;
    },
    30_000,
  );
}

/** The generation through the v1 observation API (the legacy tables) once it has its content. */
function readV1(mode: Mode, spanId: string) {
  return eventually(
    `v1 observation ${spanId} (${mode})`,
    async () => {
      const r = await callApi(s.webs[mode], s.projects[mode], 'GET', `/api/public/observations/${spanId}`);
      return r.status === 200 && r.body['output'] && r.body['name'] === 'chat gpt-4o-mini'
        ? r.body
        : undefined;
    },
    30_000,
  );
}

describe.each(MODES)('OTLP logs in write mode %s', (mode) => {
  it.each([
    ['the logs arrive before the span', true],
    ['the span arrives before the logs', false],
  ])('fills the generation when %s', async (_name, logsFirst) => {
    const { traceId, spanId } = await sendChat(s.webs[mode], s.projects[mode], logsFirst);
    if (mode !== 'events_only') {
      const o = await readV1(mode, spanId);
      expect(o).toMatchObject({ id: spanId, traceId, type: 'GENERATION', model: 'gpt-4o-mini' });
      expect(json(o['input'])).toEqual(EXPECTED_INPUT);
      expect(json(o['output'])).toEqual(EXPECTED_OUTPUT);
    }
    if (mode !== 'legacy') {
      const data = await readV2(mode, traceId, spanId);
      const byName = Object.fromEntries(data.map((o) => [o['name'], o]));
      expect(byName['chat gpt-4o-mini']).toMatchObject({ id: spanId, type: 'GENERATION' });
      expect(json(byName['chat gpt-4o-mini']!['input'])).toEqual(EXPECTED_INPUT);
      expect(json(byName['chat gpt-4o-mini']!['output'])).toEqual(EXPECTED_OUTPUT);
      expect(chatEventsOf(data)).toEqual(chatEvents(spanId));
    }
  });
});

/** A raw OTLP/JSON logs export with the events_only project's key. */
async function postLogs(body: unknown) {
  const res = await fetch(`${s.webs.events_only.url}/api/public/otel/v1/logs`, {
    method: 'POST',
    headers: { Authorization: basicAuth(s.projects.events_only), 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Body };
}

const hex = (bytes: number) => randomBytes(bytes).toString('hex');
const record = (traceId?: string, spanId?: string) => ({
  timeUnixNano: String(BigInt(Date.now()) * 1_000_000n),
  severityNumber: 17,
  severityText: 'ERROR',
  body: { stringValue: 'connection reset' },
  ...(traceId ? { traceId, spanId } : {}),
});

describe('OTLP logs partial success', () => {
  it('refuses records without trace context on their own and says why', async () => {
    const [traceId, spanId] = [hex(16), hex(8)];
    const r = await postLogs({
      resourceLogs: [{ scopeLogs: [{ logRecords: [record(traceId, spanId), record()] }] }],
    });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      partialSuccess: {
        rejectedLogRecords: '1',
        errorMessage: expect.stringContaining(
          '1 of 2 log records rejected (the others were stored); the first: log record without trace context',
        ),
      },
    });
    const stored = await eventually(
      'the accepted record',
      async () => {
        const got = await callApi(
          s.webs.events_only,
          s.projects.events_only,
          'GET',
          `/api/public/v2/observations?traceId=${traceId}&fields=core,basic,io`,
        );
        return got.body.data?.length ? got.body.data : undefined;
      },
      30_000,
    );
    expect(stored).toMatchObject([
      {
        type: 'EVENT',
        name: 'ERROR',
        level: 'ERROR',
        parentObservationId: spanId,
        input: 'connection reset',
      },
    ]);
    // Another project's key sees none of it.
    const other = await callApi(
      s.webs.events_only,
      s.other,
      'GET',
      `/api/public/v2/observations?traceId=${traceId}`,
    );
    expect(other.body.data).toEqual([]);
  });

  it('answers 400 when no record has trace context', async () => {
    const r = await postLogs({ resourceLogs: [{ scopeLogs: [{ logRecords: [record(), record()] }] }] });
    expect(r.status).toBe(400);
    expect(String(r.body['message'])).toContain('no log records were ingested');
  });
});
