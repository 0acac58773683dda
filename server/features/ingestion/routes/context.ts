/**
 * What the ingestion routes need of the process, and what a write needs of a call: its project,
 * its producer (the SDK headers) and the stores every accepted write goes through. Routes of
 * other features that accept writes the same way (scores) take the same context.
 */
import type { FastifyRequest } from 'fastify';
import type { ProducerPath } from '../../../contract/worker-api.ts';
import type { RouteContext } from '../../../platform/http/context.ts';
import type { ModelCatalog } from '../../models/catalog.ts';
import type { Principal } from '../../projects/keys.ts';
import type { IngestionTombstones } from '../../tombstones/record.ts';
import type { EntityLocks } from '../../write-model/entity-locks.ts';
import type { Attribution } from '../../write-model/records.ts';
import type { IngestionStore } from '../../write-model/store.ts';
import type { OtlpContext, OtlpExport } from '../otlp.ts';
import type { MetricPointTally } from '../otlp-metrics.ts';
import type { IngestionLog, WriteMasking } from '../write.ts';

/** A producer seen on a path events_only refuses (server/features/producers/recorder.ts tallies them). */
interface RefusedPathTally {
  record(key: {
    projectId: string;
    publicKey: string;
    sdkName: string;
    sdkVersion: string;
    path: ProducerPath;
  }): void;
}

export interface IngestionRouteContext extends RouteContext {
  store: IngestionStore;
  /** Where accepted writes are made durable before they are acknowledged; absent: the store itself. */
  ingestionLog?: IngestionLog | undefined;
  /** Serialises concurrent writes of one trace or observation. */
  locks: EntityLocks;
  /** The record of deleted traces, which every write honours. */
  tombstones: IngestionTombstones;
  /** Each project's model definitions, cached, for the cost ingestion computes. */
  models: ModelCatalog;
  /** Each project's masking rules, cached, applied to every accepted write. */
  masking: WriteMasking;
  /** Tallies producers on paths that events_only refuses; absent on release 3. */
  producers?: RefusedPathTally | undefined;
  /** Counts OTLP metric points by what became of them (the web's `/metrics`); absent: not counted. */
  metricPoints?: MetricPointTally | undefined;
}

/**
 * An OTLP export's use case (traces, logs), which both transports hand their exports to: written,
 * some of it rejected on its own (OTLP's partial success), or refused.
 */
export type OtlpIngest<Rejected> = (
  exp: OtlpExport,
  ctx: OtlpContext,
) => Promise<
  { kind: 'written'; rejected: Rejected | null } | { kind: 'refused'; status: number; message: string }
>;

/** A request's header (lower-case name) as one value: HTTP headers or gRPC metadata. */
export type HeaderLookup = (name: string) => string | undefined;

const headersOf =
  (req: FastifyRequest): HeaderLookup =>
  (name) => {
    const v = req.headers[name];
    return Array.isArray(v) ? v[0] : v;
  };

/** Reads a producer header in any of its accepted spellings: x-service-*, x-langfuse-*, underscores. */
export function producerHeaderIn(header: HeaderLookup, name: string): string | undefined {
  for (const prefix of ['x-service-', 'x-langfuse-']) {
    for (const n of [`${prefix}${name}`, `${prefix}${name}`.replaceAll('-', '_')]) {
      const value = header(n);
      if (value !== undefined && value !== '') return value;
    }
  }
  return undefined;
}

export const producerHeader = (req: FastifyRequest, name: string) => producerHeaderIn(headersOf(req), name);

function attributionFor(principal: Principal, header: HeaderLookup): Attribution {
  return {
    apiKey: principal.publicKey,
    sdkName: producerHeaderIn(header, 'sdk-name') ?? 'unknown',
    sdkVersion: producerHeaderIn(header, 'sdk-version') ?? 'unknown',
  };
}

export const attributionOf = (req: FastifyRequest) => attributionFor(req.principal, headersOf(req));

/** Where every accepted write goes: masked, through the log, merged under the locks into the store. */
export const acceptDepsOf = (ctx: IngestionRouteContext) => ({
  store: ctx.store,
  locks: ctx.locks,
  tombstones: ctx.tombstones,
  log: ctx.ingestionLog,
  masking: ctx.masking,
});

/** What an ingestion use case needs of a call: its project, producer and the stores. */
export function ingestionContextFor(ctx: IngestionRouteContext, principal: Principal, header: HeaderLookup) {
  return {
    projectId: principal.projectId,
    settings: ctx.config.mode,
    attribution: attributionFor(principal, header),
    ...acceptDepsOf(ctx),
    models: ctx.models,
  };
}

/** What an ingestion use case needs of this request. */
export const ingestionContextOf = (ctx: IngestionRouteContext, req: FastifyRequest) =>
  ingestionContextFor(ctx, req.principal, headersOf(req));

/** Notes that a call's producer used a path events_only refuses. */
export function recordRefusedPathFor(
  ctx: IngestionRouteContext,
  principal: Principal,
  header: HeaderLookup,
  path: ProducerPath,
): void {
  const a = attributionFor(principal, header);
  ctx.producers?.record({
    projectId: principal.projectId,
    publicKey: a.apiKey,
    sdkName: a.sdkName,
    sdkVersion: a.sdkVersion,
    path,
  });
}

/** Notes that this request's producer used a path events_only refuses. */
export const recordRefusedPath = (ctx: IngestionRouteContext, req: FastifyRequest, path: ProducerPath) =>
  recordRefusedPathFor(ctx, req.principal, headersOf(req), path);
