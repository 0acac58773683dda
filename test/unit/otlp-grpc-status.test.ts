import { status } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { exportServiceDefinition } from '../../server/app/web/otlp-grpc/services.ts';
import { grpcStatusOf } from '../../server/app/web/otlp-grpc/status.ts';

describe('the gRPC status of a refused OTLP export', () => {
  // OTLP's retry rules: UNAVAILABLE is retried; the rest are not (no RetryInfo is sent).
  it.each([
    [400, status.INVALID_ARGUMENT, 'a malformed export or a refused header'],
    [401, status.UNAUTHENTICATED, 'a missing or wrong key'],
    [403, status.PERMISSION_DENIED, 'an organization key'],
    [404, status.UNIMPLEMENTED, 'a signal this deployment does not serve'],
    [413, status.RESOURCE_EXHAUSTED, 'an export past a size limit'],
    [415, status.INVALID_ARGUMENT, 'any other client error'],
    [429, status.UNAVAILABLE, 'too many writes in flight, or the ingestion log behind'],
    [503, status.UNAVAILABLE, 'a datastore down'],
    [504, status.UNAVAILABLE, 'a datastore too slow'],
    [500, status.INTERNAL, 'a bug'],
  ])('HTTP %i -> %i (%s)', (http, grpc) => {
    expect(grpcStatusOf(http)).toBe(grpc);
  });
});

describe('the collector services', () => {
  it.each([
    ['traces', '/opentelemetry.proto.collector.trace.v1.TraceService/Export'],
    ['metrics', '/opentelemetry.proto.collector.metrics.v1.MetricsService/Export'],
    ['logs', '/opentelemetry.proto.collector.logs.v1.LogsService/Export'],
  ] as const)('%s: %s, bytes through', (signal, path) => {
    const method = exportServiceDefinition(signal)['Export']!;
    expect(method.path).toBe(path);
    const bytes = Buffer.from([1, 2, 3]);
    expect(method.requestDeserialize(bytes)).toBe(bytes);
    expect(method.responseSerialize(bytes)).toBe(bytes);
  });
});
