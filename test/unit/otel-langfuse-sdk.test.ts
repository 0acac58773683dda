import { LangfuseSpanProcessor } from '@langfuse/otel';
import { propagateAttributes, setLangfuseTracerProvider, startObservation } from '@langfuse/tracing';
import { JsonTraceSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeTraceExport } from '../../server/features/otel/decode.ts';
import { mapExport } from '../../server/features/otel/map-spans.ts';
import type { OtelObservation } from '../../server/features/otel/types.ts';
import { validateTraceExport } from '../../server/features/otel/validate.ts';

/**
 * Spans produced by the real Langfuse JS SDK (5.x), captured in-process through the processor's `exporter`
 * option (no network), serialized by the real OTLP serializers, then decoded, validated and mapped.
 */
describe('spans from @langfuse/tracing + @langfuse/otel', () => {
  const exporter = new InMemorySpanExporter();
  const processor = new LangfuseSpanProcessor({
    exporter,
    exportMode: 'immediate',
    publicKey: 'pk-lf-test',
    secretKey: 'sk-lf-test',
    baseUrl: 'http://127.0.0.1:9', // never contacted: spans go to the in-memory exporter, media upload is off
    mediaUploadEnabled: false,
    environment: 'Staging',
    release: 'rel-7',
  });
  const provider = new NodeTracerProvider({ spanProcessors: [processor] });
  let observations: { json: OtelObservation[]; protobuf: OtelObservation[] };

  beforeAll(async () => {
    provider.register(); // async-local context, needed by propagateAttributes
    setLangfuseTracerProvider(provider);
    propagateAttributes(
      {
        userId: 'user-42',
        sessionId: 'session-9',
        tags: ['checkout', 'beta'],
        metadata: { tenant: 'acme' },
        traceName: 'order',
      },
      () => {
        const root = startObservation('handle-order', { input: { orderId: 1 } });
        const generation = root.startObservation(
          'llm-call',
          {
            model: 'gpt-4o-mini',
            modelParameters: { temperature: 0.3, max_tokens: 256 },
            usageDetails: { input: 120, output: 30, total: 150 },
            costDetails: { input: 0.0012, output: 0.0009, total: 0.0021 },
            input: [{ role: 'user', content: 'Where is my order?' }],
            metadata: { attempt: 1 },
          },
          { asType: 'generation' },
        );
        generation.update({ output: { role: 'assistant', content: 'On its way.' }, level: 'WARNING' });
        generation.end();
        root.update({ output: 'done' });
        root.end();
      },
    );
    await processor.forceFlush();
    const spans = exporter.getFinishedSpans();
    const decode = (body: Uint8Array, type: string) => {
      const request = decodeTraceExport(Buffer.from(body), type, undefined);
      expect(validateTraceExport(request)).toBeNull();
      return mapExport(request, { sdkName: 'javascript', sdkVersion: '5.11.1' });
    };
    observations = {
      json: decode(JsonTraceSerializer.serializeRequest(spans)!, 'application/json'),
      protobuf: decode(ProtobufTraceSerializer.serializeRequest(spans)!, 'application/x-protobuf'),
    };
  });

  afterAll(async () => {
    setLangfuseTracerProvider(null);
    await provider.shutdown();
  });

  it('maps the same from OTLP/JSON (what the JS SDK sends) and protobuf', () => {
    expect(observations.json).toEqual(observations.protobuf);
    expect(observations.json).toHaveLength(2);
  });

  it('maps the generation with model, parameters, usage, cost, user and session', () => {
    const generation = observations.json.find((o) => o.name === 'llm-call')!;
    const root = observations.json.find((o) => o.name === 'handle-order')!;
    expect(generation).toMatchObject({
      type: 'GENERATION',
      traceId: root.traceId,
      parentSpanId: root.spanId,
      modelName: 'gpt-4o-mini',
      modelParameters: { temperature: '0.3', max_tokens: '256' },
      usageDetails: { input: 120, output: 30, total: 150 },
      costDetails: { input: 0.0012, output: 0.0009, total: 0.0021 },
      userId: 'user-42',
      sessionId: 'session-9',
      tags: ['checkout', 'beta'],
      traceName: 'order',
      environment: 'staging',
      release: 'rel-7',
      level: 'WARNING',
      input: '[{"role":"user","content":"Where is my order?"}]',
      output: '{"role":"assistant","content":"On its way."}',
      instrumentation: {
        scopeName: 'langfuse-sdk',
        sdkLanguage: 'nodejs',
        ingestionSdkName: 'javascript',
        ingestionSdkVersion: '5.11.1',
      },
    });
    expect(generation.metadata).toMatchObject({ attempt: '1', tenant: 'acme' });
    expect(generation.metadata).not.toHaveProperty('attributes'); // Langfuse scope: no raw attribute copy
    expect(generation.trace).toMatchObject({
      userId: 'user-42',
      sessionId: 'session-9',
      metadata: { tenant: 'acme' },
    });
  });

  it('maps the root span as the app root with its input and output', () => {
    const root = observations.json.find((o) => o.name === 'handle-order')!;
    expect(root).toMatchObject({
      type: 'SPAN',
      parentSpanId: '',
      isAppRoot: true,
      input: '{"orderId":1}',
      output: 'done',
      userId: 'user-42',
      promptName: null,
    });
    expect(root.startTime <= root.endTime).toBe(true);
  });
});
