/**
 * The planner's contract with the runtime: what the runtime observes (World) and what the
 * planner asks it to do (Action). Plain data only, so a thin runtime can fill World from its
 * informers and probes and execute Actions in order, stopping at the first failure.
 */
import type {
  V1ConfigMap,
  V1Deployment,
  V1Job,
  V1NetworkPolicy,
  V1PodDisruptionBudget,
  V1Service,
} from '@kubernetes/client-node';
import type { Consequence } from '../../server/contract/worker-api.ts';
import type { ObservabilityService, ObservabilityServiceStatus } from '../api/v1alpha1.ts';
import type { JobPurpose } from '../render/jobs.ts';
import type { Role } from '../render/names.ts';
import type { SourceDigests } from '../render/sources.ts';

/** A Deployment as the informer sees it (absent: not created yet). */
export interface ObservedDeployment {
  generation: number;
  observedGeneration: number;
  /** spec.replicas */
  specReplicas: number;
  /** status.replicas, updatedReplicas, readyReplicas, availableReplicas (absent counts as 0). */
  replicas: number;
  updatedReplicas: number;
  readyReplicas: number;
  availableReplicas: number;
  /** The pod template's observatory.dev/config-hash annotation. */
  configHash: string;
  /** The object's observatory.dev/spec-hash annotation. */
  specHash: string;
  /**
   * Pods of the role whose template is not the Deployment's current one, terminating ones
   * included: until they are gone they may still answer through the Service in the old mode.
   */
  stalePods: number;
  /** Pods of the role not finished, terminating ones included (a restore waits for none). */
  livePods?: number;
}

export interface ObservedService {
  specHash: string;
}

/** A Job owned by the object. Outcome comes from the terminal Complete/Failed condition (G6). */
export interface ObservedJob {
  name: string;
  /** The observatory.dev/purpose annotation. */
  purpose: string;
  outcome: 'running' | 'succeeded' | 'failed';
  /** Reason and message of the Failed condition. */
  reason?: string;
  message?: string;
  /**
   * The termination message of the container that exited 0 (a backup Job's summary,
   * server/contract/backup.ts); absent while no Pod of the Job succeeded.
   */
  terminationMessage?: string;
}

/** GET /api/health?failIfEventPropagationStuck=true on one worker pod: 200, 503, or no answer. */
export type ProbeResult = 'healthy' | 'stuck' | 'unreachable';
export interface WorkerProbe {
  pod: string;
  result: ProbeResult;
}

/**
 * A producer EventsOnly would refuse or change, from the worker's GET /api/producers?since=<quiet
 * period>, with the consequence (only `refused` blocks the cutover).
 */
export interface IncompatibleProducer {
  sdkName: string;
  sdkVersion: string;
  path: string;
  consequence: Consequence;
  /** When the worker last saw it (ISO time); absent: unknown. */
  lastSeen?: string;
}
/** An enabled trace-level (Legacy) evaluation rule, from the same report: it stops at the cutover. */
export interface LegacyEvaluatorRef {
  projectId: string;
  name: string;
}
export type ProducersReport =
  | { known: false }
  | { known: true; producers: IncompatibleProducer[]; legacyEvaluators?: LegacyEvaluatorRef[] };

export type BackfillStepState = 'pending' | 'dormant' | 'running' | 'finished' | 'failed';
export interface BackfillStepReport {
  step: number;
  status: BackfillStepState;
  chunksDone: number;
  chunksTotal: number;
}
/** The worker's GET /api/backfill, or unknown when it did not answer. */
export type BackfillReport =
  | { known: false }
  | {
      known: true;
      steps: BackfillStepReport[];
      /** Why the next chunk waits for the analytics store (the worker's report; absent: it does not). */
      pressure?: { step: number; reason: string };
    };

/**
 * A result the command of a Job recorded as it ended (the worker's GET /api/job-results): it
 * outlives the Job's Pod and the Job itself.
 */
export interface RecordedJobResult {
  job: string;
  result: 'succeeded' | 'failed';
  /** What the command said of it (the failed checks, the schema version reached). */
  detail: string;
}
/** The recorded results, or unknown when no worker answered. */
export type RecordedJobResults = { known: false } | { known: true; results: RecordedJobResult[] };

/** The worker's GET /api/ingestion/backlog, or unknown when no worker answered. */
export type IngestionBacklogReport =
  | { known: false }
  | { known: true; pendingFiles: number; pendingBytes: number; oldestPendingAgeSeconds: number };

export interface World {
  deployments: Partial<Record<Role, ObservedDeployment>>;
  services: Partial<Record<Role, ObservedService>>;
  /** The PodDisruptionBudgets of the roles (same shape: the spec-hash annotation). */
  disruptionBudgets?: Partial<Record<Role, ObservedService>>;
  /** The NetworkPolicies of the roles (same shape: the spec-hash annotation). */
  networkPolicies?: Partial<Record<Role, ObservedService>>;
  /** Per-key digests of the Secrets and ConfigMaps the operator watches (absent: none). */
  sources?: SourceDigests;
  /** Jobs owned by the object (by ownerReference or instance label). */
  jobs: ObservedJob[];
  /** One entry per worker pod; undefined when not probed (see `observationsNeeded`). */
  workerProbes?: WorkerProbe[];
  producers: ProducersReport;
  backfill: BackfillReport;
  /** Read only while the worker autoscaler is on (absent: not read). */
  ingestionBacklog?: IngestionBacklogReport;
  /** Read only while a Job whose command records its result may be looked up (absent: not read). */
  jobResults?: RecordedJobResults;
  now: Date;
}

export interface PlanInput {
  object: ObservabilityService;
  world: World;
}

export type Action =
  | { kind: 'applyDeployment'; role: Role; object: V1Deployment }
  | { kind: 'applyService'; role: Role; object: V1Service }
  | { kind: 'applyDisruptionBudget'; role: Role; object: V1PodDisruptionBudget }
  | { kind: 'deleteDisruptionBudget'; role: Role; name: string }
  | { kind: 'applyNetworkPolicy'; role: Role; object: V1NetworkPolicy }
  | { kind: 'deleteNetworkPolicy'; role: Role; name: string }
  | { kind: 'createJob'; purpose: JobPurpose; object: V1Job }
  | { kind: 'deleteJob'; name: string; reason: string }
  /** Server-side apply of an owned record (one ConfigMap per backup). */
  | { kind: 'applyConfigMap'; object: V1ConfigMap }
  /** Removes an owned record (a backup retention deleted). */
  | { kind: 'deleteConfigMap'; name: string }
  /** Replace .status through the status subresource, with the object's resourceVersion as precondition. */
  | { kind: 'writeStatus'; status: ObservabilityServiceStatus }
  | { kind: 'event'; type: 'Normal' | 'Warning'; reason: string; message: string }
  | { kind: 'requeue'; afterSeconds: number };

export interface Plan {
  /** In execution order; the runtime stops at the first failure and retries with backoff. */
  actions: Action[];
  /** The status after this pass (also inside the writeStatus action when it changed). */
  status: ObservabilityServiceStatus;
}
