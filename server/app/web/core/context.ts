/** What the web routes need from the process: configuration and the datastore clients. */
import type { ClickHouseClient } from '@clickhouse/client';
import type { FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import type pg from 'pg';
import type { ProducerPath } from '../../../contract/worker-api.ts';
import type { BacklogGate } from '../../../features/ingestion/log/log.ts';
import type { MetricPointTally } from '../../../features/ingestion/otlp-metrics.ts';
import type { IngestionLog } from '../../../features/ingestion/write.ts';
import type { MaskingCatalog } from '../../../features/masking/catalog.ts';
import type { ModelCatalog } from '../../../features/models/catalog.ts';
import type { ProducerRecorder } from '../../../features/producers/recorder.ts';
import type { KeyVerifier, Principal } from '../../../features/projects/keys.ts';
import type { IngestionTombstones } from '../../../features/tombstones/record.ts';
import type { SignInThrottle } from '../../../features/users/login-throttle.ts';
import type { EntityLocks } from '../../../features/write-model/entity-locks.ts';
import type { Attribution } from '../../../features/write-model/records.ts';
import type { IngestionStore } from '../../../features/write-model/store.ts';
import type { ServiceConfig } from '../../../kernel/config/env.ts';
import type { LocalBlobStore } from '../../../platform/blobs/local.ts';
import type { BlobStore } from '../../../platform/blobs/store.ts';
import type { Coordination } from '../../../platform/coordination/store.ts';

export interface WebContext {
  config: ServiceConfig;
  pool: pg.Pool;
  analytics: ClickHouseClient;
  store: IngestionStore;
  /** Where accepted writes are made durable before they are acknowledged; absent: the store itself. */
  ingestionLog?: IngestionLog | undefined;
  /** Refuses writes (429) while the ingestion log's backlog is past its bounds; absent without a log. */
  ingestionBacklog?: BacklogGate | undefined;
  /** Serialises concurrent writes of one trace or observation. */
  locks: EntityLocks;
  /** The record of deleted traces, which every write honours. */
  tombstones: IngestionTombstones;
  keys: KeyVerifier;
  /** Each project's model definitions, cached, for the cost ingestion computes. */
  models: ModelCatalog;
  /** Each project's masking rules, cached, applied to every accepted write. */
  masking: MaskingCatalog;
  /** Tallies producers on paths that events_only refuses; absent on release 3. */
  producers?: ProducerRecorder | undefined;
  /** Where uploaded media lives; absent when no media storage is configured. */
  mediaBlobs?: BlobStore | undefined;
  /** Where the scheduled exports write; absent when no export storage is configured. */
  exportBlobs?: BlobStore | undefined;
  /** Local blob stores whose signed URLs this process serves itself (`observatory dev`). */
  localBlobs?: LocalBlobStore[] | undefined;
  /** The worker's coordination store (Redis), read for the propagation report; absent without REDIS_URL. */
  coordination?: Coordination | undefined;
  /** Counts every password check before it runs (per account and address); absent: in this process. */
  signIns?: SignInThrottle | undefined;
  /** Where the per-address sign-in limit counts (shared by the replicas); absent: in this process. */
  signInStore?: Redis | undefined;
  /** Counts OTLP metric points by what became of them (the web's `/metrics`); absent: not counted. */
  metricPoints?: MetricPointTally | undefined;
  /** Set once SIGTERM arrived: readiness fails so traffic drains. */
  shuttingDown: () => boolean;
}

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal;
  }
}

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
export const acceptDepsOf = (ctx: WebContext) => ({
  store: ctx.store,
  locks: ctx.locks,
  tombstones: ctx.tombstones,
  log: ctx.ingestionLog,
  masking: ctx.masking,
});

/** What an ingestion use case needs of a call: its project, producer and the stores. */
export function ingestionContextFor(ctx: WebContext, principal: Principal, header: HeaderLookup) {
  return {
    projectId: principal.projectId,
    settings: ctx.config.mode,
    attribution: attributionFor(principal, header),
    ...acceptDepsOf(ctx),
    models: ctx.models,
  };
}

/** What an ingestion use case needs of this request. */
export const ingestionContextOf = (ctx: WebContext, req: FastifyRequest) =>
  ingestionContextFor(ctx, req.principal, headersOf(req));

/** Notes that a call's producer used a path events_only refuses. */
export function recordRefusedPathFor(
  ctx: WebContext,
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
export const recordRefusedPath = (ctx: WebContext, req: FastifyRequest, path: ProducerPath) =>
  recordRefusedPathFor(ctx, req.principal, headersOf(req), path);
