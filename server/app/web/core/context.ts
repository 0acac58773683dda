/**
 * What the web process provides its routes: configuration, the datastore clients and caches. Each
 * feature's routes take a context of their own, which this one extends, so that tsc checks here
 * that the process provides what every plugin it registers needs.
 */
import type { Redis } from 'ioredis';
import type { BackfillRouteContext } from '../../../features/backfill/routes/ui.ts';
import type { DatasetsRouteContext } from '../../../features/datasets/routes/context.ts';
import type { ExportsRouteContext } from '../../../features/exports/routes/public.ts';
import type { BacklogGate } from '../../../features/ingestion/log/log.ts';
import type { MetricPointTally } from '../../../features/ingestion/otlp-metrics.ts';
import type { IngestionRouteContext } from '../../../features/ingestion/routes/context.ts';
import type { IngestionLog } from '../../../features/ingestion/write.ts';
import type { MaskingCatalog } from '../../../features/masking/catalog.ts';
import type { MaskingRouteContext } from '../../../features/masking/routes/family.ts';
import type { MediaRouteContext } from '../../../features/media/routes/public.ts';
import type { ModelCatalog } from '../../../features/models/catalog.ts';
import type { ModelsRouteContext } from '../../../features/models/routes/context.ts';
import type { ProducerRecorder } from '../../../features/producers/recorder.ts';
import type { KeyVerifier, Principal } from '../../../features/projects/keys.ts';
import type { ProjectsRouteContext } from '../../../features/projects/routes/context.ts';
import type { IngestionTombstones } from '../../../features/tombstones/record.ts';
import type { SignInThrottle } from '../../../features/users/login-throttle.ts';
import type { EntityLocks } from '../../../features/write-model/entity-locks.ts';
import type { IngestionStore } from '../../../features/write-model/store.ts';
import type { LocalBlobStore } from '../../../platform/blobs/local.ts';
import type { BlobStore } from '../../../platform/blobs/store.ts';
import type { Coordination } from '../../../platform/coordination/store.ts';

export interface WebContext
  extends IngestionRouteContext,
    DatasetsRouteContext,
    ModelsRouteContext,
    ProjectsRouteContext,
    MaskingRouteContext,
    ExportsRouteContext,
    MediaRouteContext,
    BackfillRouteContext {
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
