/**
 * Span links from the real OpenTelemetry JS SDK (protobuf exporter) in every write mode: a
 * consumer span of one trace links to the producer span of another; the link is kept on the
 * consumer's observation as metadata `links` (`[{traceId, spanId, attributes}]`) and read back
 * through Observations API v1 (legacy tables) and v2 (events tables, `expandMetadata=links` for
 * the full value).
 */
import { describe, expect, it } from 'vitest';
import { eventually } from '../conformance/env.ts';
import { type Body, callApi, MODES, modeWebsForSuite } from '../fixtures/mode-webs.ts';
import { sendLinkedTraces } from '../fixtures/otel-producers.ts';

const s = modeWebsForSuite('otel-links');

/** Metadata values come back parsed when they are JSON; a string is parsed here. */
const json = (v: unknown) => (typeof v === 'string' ? JSON.parse(v) : v);

describe.each(MODES)('span links in write mode %s', (mode) => {
  it("keeps the link on the consumer's observation, readable through the observations API", async () => {
    const { producer, consumer } = await sendLinkedTraces(s.webs[mode], s.projects[mode]);
    expect(consumer.traceId).not.toBe(producer.traceId);
    const expected = [
      {
        traceId: producer.traceId,
        spanId: producer.spanId,
        attributes: { 'messaging.operation': 'process' },
      },
    ];
    if (mode !== 'events_only') {
      const o = await eventually(
        `v1 observation ${consumer.spanId}`,
        async () => {
          const r = await callApi(
            s.webs[mode],
            s.projects[mode],
            'GET',
            `/api/public/observations/${consumer.spanId}`,
          );
          return r.status === 200 ? r.body : undefined;
        },
        30_000,
      );
      expect(o).toMatchObject({ traceId: consumer.traceId, name: 'process' });
      expect(json((o['metadata'] as Body)['links'])).toEqual(expected);
    }
    if (mode !== 'legacy') {
      const [o] = await eventually(
        `v2 observations of ${consumer.traceId}`,
        async () => {
          const r = await callApi(
            s.webs[mode],
            s.projects[mode],
            'GET',
            `/api/public/v2/observations?traceId=${consumer.traceId}&fields=core,basic,metadata&expandMetadata=links`,
          );
          return r.body.data?.length ? r.body.data : undefined;
        },
        30_000,
      );
      expect(o).toMatchObject({ id: consumer.spanId, name: 'process' });
      expect(json((o!['metadata'] as Body)['links'])).toEqual(expected);
    }
  });
});
