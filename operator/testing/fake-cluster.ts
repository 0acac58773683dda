/**
 * A simulated world for replaying whole migrations through the planner (G10): fake Deployment
 * and Job controllers that act with random delays and failures, a fake database holding the
 * schema and the backfill records, worker probes and producer reports, an informer cache that
 * lags, optimistic concurrency on status writes, and operator restarts. Every action the planner
 * asks for is checked against the safety properties at the moment it executes; a broken property
 * is recorded in `violations`. Pure in-memory code for tests: no I/O.
 */

import type { V1Deployment, V1EnvVar, V1Job } from '@kubernetes/client-node';
import { parseDuration } from '../../server/contract/duration.ts';
import { readModeSettings } from '../../server/contract/env.ts';
import { LATEST_SCHEMA_VERSION } from '../../server/contract/schema-versions.ts';
import { findViolations, type ModeSettings } from '../../server/contract/write-modes.ts';
import { backfillEnabled, desiredState, enabledSteps } from '../api/effective.ts';
import type { ObservabilityService, ObservabilityServiceSpec } from '../api/v1alpha1.ts';
import { windowAt } from '../api/windows.ts';
import { observationsNeeded } from '../planner/observations.ts';
import { plan } from '../planner/plan.ts';
import type {
  Action,
  BackfillStepState,
  ObservedDeployment,
  ObservedJob,
  Plan,
  ProbeResult,
  World,
} from '../planner/types.ts';
import { ATTEMPT_ANNOTATION, PURPOSE_ANNOTATION, type Role } from '../render/names.ts';
import type { SourceDigests } from '../render/sources.ts';
import { configHashOf, specHashOf } from '../render/workloads.ts';
import type { StatusRecord } from './condition-history.ts';

export type Rng = () => number;

/** mulberry32: small, seedable, good enough for schedules. */
export function seededRng(seed: number): Rng {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface SimPod {
  hash: string;
  mode: string;
  ready: boolean;
}

interface SimDeployment {
  object: V1Deployment;
  generation: number;
  observedGeneration: number;
  pods: SimPod[];
}

interface SimJob {
  object: V1Job;
  purpose: string;
  attempt: number;
  outcome: 'running' | 'succeeded' | 'failed';
  message?: string;
  /** Simulated time the Job finished; its ttlSecondsAfterFinished counts from here. */
  finishedAt?: number;
}

export interface Chaos {
  /** Probability that a Job fails on its own. */
  jobFailure: number;
  /** Probability that one API call fails (the runtime then stops executing the plan). */
  apiFailure: number;
  /** Probability that a worker pod's probe is stuck or unreachable at a reconcile. */
  probeFlake: number;
  /** Probability that the worker's reports are unreachable at a reconcile. */
  reportOutage: number;
  /** Probability that the informer cache is not refreshed before a reconcile. */
  cacheLag: number;
}

export const CALM: Chaos = { jobFailure: 0, apiFailure: 0, probeFlake: 0, reportOutage: 0, cacheLag: 0 };

const STEP_STATES = ['pending', 'failed', 'finished'] as const;
type DbStep = (typeof STEP_STATES)[number];

export class FakeCluster {
  readonly rng: Rng;
  chaos: Chaos;
  now: number;
  live: ObservabilityService;
  private resourceVersion = 1;
  readonly deployments = new Map<Role, SimDeployment>();
  readonly services = new Map<Role, string>();
  readonly disruptionBudgets = new Map<Role, string>();
  /** Digests of the watched Secrets, as the operator's Secret informer would hand them over. */
  sources: SourceDigests = { secrets: {}, configMaps: {} };
  readonly jobs = new Map<string, SimJob>();
  /** Jobs the operator's informer has shown finished: their attempt must never run again. */
  private readonly seenFinished = new Set<string>();
  readonly db = {
    schema: 'none' as 'none' | 'v3' | 'v4',
    steps: {} as Record<number, DbStep>,
    truncated: false,
  };
  /** Producers EventsOnly would refuse, as the worker reports them. */
  incompatibleProducers = 0;
  /** What the operator's informers show (dropped on restart). */
  private cache:
    | { object: ObservabilityService; deployments: World['deployments']; jobs: ObservedJob[] }
    | undefined;
  readonly violations: string[] = [];
  readonly log: string[] = [];
  /** Every status written, in order, with what the operator saw when it computed it. */
  readonly statuses: StatusRecord[] = [];
  /** Distinct Jobs created per purpose, and retries the user asked for per purpose. */
  readonly created = new Map<string, string[]>();
  /** The purpose of every Job created, in order. */
  readonly jobsCreated: string[] = [];
  readonly retriesAsked = new Map<string, number>();
  reconciles = 0;
  private everCommitted = false;
  /** Consecutive probe rounds with a stuck answer, over the rounds whose status was written. */
  private stuckRounds = 0;
  private lastState: string | undefined;

  constructor(spec: ObservabilityServiceSpec, rng: Rng, chaos: Chaos) {
    this.rng = rng;
    this.chaos = chaos;
    this.now = Date.parse('2026-01-01T00:00:00Z');
    this.live = {
      apiVersion: 'observatory.dev/v1alpha1',
      kind: 'ObservabilityService',
      metadata: { name: 'obs', namespace: 'default', uid: 'uid-1', generation: 1, resourceVersion: '1' },
      spec,
    };
    for (let s = 1; s <= 5; s++) this.db.steps[s] = 'pending';
  }

  private fail(message: string): void {
    this.violations.push(
      `${message} [after ${this.reconciles} reconciles, state ${this.live.status?.state}]`,
    );
  }

  private bump(): void {
    this.resourceVersion++;
    this.live.metadata.resourceVersion = String(this.resourceVersion);
  }

  // ---- the user ----

  updateSpec(change: (spec: ObservabilityServiceSpec) => ObservabilityServiceSpec): void {
    this.live.spec = change(structuredClone(this.live.spec));
    this.live.metadata.generation++;
    this.bump();
  }

  annotate(key: string, value: string): void {
    this.live.metadata.annotations = { ...this.live.metadata.annotations, [key]: value };
    this.bump();
  }

  /** Follows the documented retry in the Stalled message, if it names one. */
  retryIfStalled(): boolean {
    const stalled = this.live.status?.conditions?.find((c) => c.type === 'Stalled' && c.status === 'True');
    const m = stalled && /kubectl annotate obsvc\/\S+ (\S+)=(\S+) --overwrite/.exec(stalled.message);
    if (!m || !/retry/.test(m[1]!)) return false;
    const purpose = /Job \S+ \(([^)]+)\)/.exec(stalled.message)?.[1] ?? m[1]!;
    this.retriesAsked.set(purpose, (this.retriesAsked.get(purpose) ?? 0) + 1);
    this.annotate(m[1]!, m[2]!);
    return true;
  }

  approveCurrentGeneration(): void {
    this.annotate('observatory.dev/approve-cutover', String(this.live.metadata.generation));
  }

  // ---- the operator ----

  restartOperator(): void {
    this.cache = undefined;
  }

  private refreshCache(): void {
    for (const j of this.jobs.values())
      if (j.outcome !== 'running') this.seenFinished.add(j.object.metadata!.name!);
    this.cache = {
      object: structuredClone(this.live),
      deployments: Object.fromEntries([...this.deployments].map(([role, d]) => [role, observe(d)])),
      jobs: [...this.jobs.values()].map((j) => ({
        name: j.object.metadata!.name!,
        purpose: j.purpose,
        outcome: j.outcome,
        ...(j.outcome === 'failed' ? { reason: 'BackoffLimitExceeded', message: j.message ?? 'failed' } : {}),
      })),
    };
  }

  private world(object: ObservabilityService): World {
    const needs = observationsNeeded(object);
    const outage = this.rng() < this.chaos.reportOutage;
    const workerPods = this.deployments.get('worker')?.pods ?? [];
    const probes = needs.workerProbePath
      ? workerPods
          .flatMap((p, i) => (p.ready ? [`obs-worker-${i}`] : []))
          .map((pod) => ({ pod, result: this.probeAnswer() }))
      : undefined;
    return {
      deployments: this.cache!.deployments,
      services: Object.fromEntries([...this.services].map(([r, h]) => [r, { specHash: h }])),
      disruptionBudgets: Object.fromEntries(
        [...this.disruptionBudgets].map(([r, h]) => [r, { specHash: h }]),
      ),
      sources: structuredClone(this.sources),
      jobs: this.cache!.jobs,
      ...(probes ? { workerProbes: probes } : {}),
      producers: outage
        ? { known: false }
        : {
            known: true,
            producers: Array.from({ length: this.incompatibleProducers }, (_, i) => ({
              sdkName: 'python',
              sdkVersion: `2.${i}.0`,
              path: 'ingestion-api',
              consequence: 'refused' as const,
            })),
          },
      backfill: outage
        ? { known: false }
        : {
            known: true,
            steps: [1, 2, 3, 4, 5].map((step) => ({
              step,
              status: this.reportedStep(step),
              chunksDone: 0,
              chunksTotal: 0,
            })),
          },
      now: new Date(this.now),
    };
  }

  /** A Ready worker's answer to the propagation probe, flaky as chaos says. */
  private probeAnswer(): ProbeResult {
    if (this.rng() >= this.chaos.probeFlake) return 'healthy';
    return this.rng() < 0.5 ? 'unreachable' : 'stuck';
  }

  private reportedStep(step: number): BackfillStepState {
    const s = this.db.steps[step]!;
    if (s !== 'pending') return s;
    const running = [...this.jobs.values()].some(
      (j) => j.purpose === `backfill-${step}` && j.outcome === 'running',
    );
    return running ? 'running' : 'pending';
  }

  /** One reconcile as the runtime does it: plan from the (maybe stale) cache, execute in order. */
  reconcile(): Plan {
    this.reconciles++;
    if (!this.cache || this.rng() >= this.chaos.cacheLag) this.refreshCache();
    const object = this.cache!.object;
    const world = this.world(object);
    const p = plan({ object, world });
    for (const a of p.actions) {
      if (a.kind !== 'event' && a.kind !== 'requeue' && this.rng() < this.chaos.apiFailure) break;
      if (!this.execute(a, object, world)) break;
    }
    return p;
  }

  private execute(a: Action, seen: ObservabilityService, world: World): boolean {
    switch (a.kind) {
      case 'writeStatus': {
        if (seen.metadata.resourceVersion !== this.live.metadata.resourceVersion) return false; // conflict
        this.checkStatusWrite(a.status, world);
        this.live.status = structuredClone(a.status);
        this.statuses.push({
          status: structuredClone(a.status),
          ...(seen.metadata.annotations ? { annotations: { ...seen.metadata.annotations } } : {}),
          world: flakyFacts(world),
        });
        this.bump();
        return true;
      }
      case 'applyDeployment':
        this.checkDeployment(a.object);
        this.applyDeployment(a.role, a.object);
        return true;
      case 'applyService':
        this.services.set(a.role, specHashOf(a.object));
        return true;
      case 'applyDisruptionBudget':
        this.disruptionBudgets.set(a.role, specHashOf(a.object));
        return true;
      case 'deleteDisruptionBudget':
        this.disruptionBudgets.delete(a.role);
        return true;
      case 'createJob':
        this.createJob(a.object);
        return true;
      case 'deleteJob':
        this.jobs.delete(a.name);
        return true;
      case 'event':
        this.log.push(`${a.type} ${a.reason}: ${a.message}`);
        return true;
      case 'requeue':
        return true;
    }
  }

  private applyDeployment(role: Role, object: V1Deployment): void {
    const d = this.deployments.get(role);
    if (!d) {
      this.deployments.set(role, { object, generation: 1, observedGeneration: 0, pods: [] });
      return;
    }
    if (specHashOf(d.object) !== specHashOf(object)) d.generation++;
    d.object = object;
  }

  private createJob(object: V1Job): void {
    const name = object.metadata!.name!;
    if (this.jobs.has(name)) return; // AlreadyExists: the same attempt
    if (this.seenFinished.has(name)) this.fail(`Job ${name} re-created after its TTL removed it`);
    const purpose = object.metadata!.annotations![PURPOSE_ANNOTATION]!;
    const attempt = Number(object.metadata!.annotations![ATTEMPT_ANNOTATION]);
    this.checkJob(purpose, object);
    if (/^(backfill-\d|cleanup)$/.test(purpose) && !this.windowOpen())
      this.fail(`Job ${purpose} created outside the maintenance windows`);
    const names = this.created.get(purpose) ?? [];
    if (!names.includes(name)) names.push(name);
    this.created.set(purpose, names);
    this.jobsCreated.push(purpose);
    this.jobs.set(name, { object, purpose, attempt, outcome: 'running' });
  }

  // ---- the controllers ----

  /** Advances time and lets the Deployment and Job controllers make random progress. */
  tick(): void {
    this.now += Math.floor(this.rng() * 120_000);
    for (const d of this.deployments.values()) this.deploymentController(d);
    for (const j of this.jobs.values()) if (j.outcome === 'running' && this.rng() < 0.5) this.finishJob(j);
    this.ttlController();
  }

  /** Kubernetes' TTL-after-finished controller: removes a finished Job once its TTL elapsed. */
  private ttlController(): void {
    for (const [name, j] of this.jobs) {
      const ttl = j.object.spec!.ttlSecondsAfterFinished;
      if (j.finishedAt !== undefined && ttl !== undefined && j.finishedAt + ttl * 1000 <= this.now)
        this.jobs.delete(name);
    }
  }

  private deploymentController(d: SimDeployment): void {
    d.observedGeneration = d.generation;
    const hash = configHashOf(d.object);
    const want = d.object.spec!.replicas ?? 1;
    const mode = modeOf(d.object.spec!.template.spec!.containers[0]!.env!);
    const old = d.pods.findIndex((p) => p.hash !== hash);
    if (old >= 0 && this.rng() < 0.7) d.pods.splice(old, 1, { hash, mode, ready: false });
    else if (d.pods.length < want) d.pods.push({ hash, mode, ready: false });
    else if (d.pods.length > want) d.pods.pop();
    for (const p of d.pods) if (!p.ready && this.rng() < 0.6) p.ready = true;
  }

  private finishJob(j: SimJob): void {
    const failure = this.runJob(j);
    j.outcome = failure === undefined ? 'succeeded' : 'failed';
    j.finishedAt = this.now;
    if (failure !== undefined) j.message = failure;
  }

  /** What the Job's command does to the database; returns the failure message, if any. */
  private runJob(j: SimJob): string | undefined {
    const env = j.object.spec!.template.spec!.containers[0]!.env!;
    const settings = readModeSettings(envRecord(env));
    const backfill = /^backfill-(retry-)?(\d)$/.exec(j.purpose);
    const step = Number(backfill?.[2]);
    if (backfill?.[1]) {
      if (this.db.steps[step] !== 'failed') return `backfill step ${step} has not failed; nothing to retry`;
      this.db.steps[step] = 'pending';
      return undefined;
    }
    if (this.rng() < this.chaos.jobFailure) {
      if (backfill && this.db.steps[step] !== 'finished') this.db.steps[step] = 'failed';
      return 'random failure';
    }
    if (backfill) {
      if (this.db.steps[step] === 'finished') return undefined;
      if (this.db.steps[step] === 'failed') return `backfill step ${step} failed earlier; retry it`;
      if (this.db.schema !== 'v4') return 'events tables missing';
      if (settings.writeMode === 'legacy' || !settings.enableHistoricBackfill) return 'gated off';
      if (step > 1 && this.db.steps[step - 1] !== 'finished') return `waits for step ${step - 1}`;
      this.db.steps[step] = 'finished';
      return undefined;
    }
    switch (j.purpose) {
      case 'migrate':
        if (settings.release === '3' && this.db.schema === 'v4')
          return `no migration was found for version ${LATEST_SCHEMA_VERSION}`;
        this.db.schema = settings.release === '4' ? 'v4' : 'v3';
        return undefined;
      case 'rollback':
        this.db.schema = 'v3';
        return undefined;
      case 'cleanup':
        if (settings.writeMode !== 'events_only') return 'refused: only in events_only';
        this.db.truncated = true;
        return undefined;
    }
    return undefined;
  }

  // ---- the properties, checked when an action executes ----

  private podsOf(role: Role): SimPod[] {
    return this.deployments.get(role)?.pods ?? [];
  }

  private checkJob(purpose: string, job: V1Job): void {
    const env = job.spec!.template.spec!.containers[0]!.env!;
    checkEnvAccepted(env, `Job ${purpose}`, (m) => this.fail(m));
    if (purpose.startsWith('backfill-') && !purpose.startsWith('backfill-retry-')) {
      // Rule 3: every web and worker pod dual-writes before any backfill step starts.
      for (const role of ['web', 'worker'] as const) {
        const pods = this.podsOf(role);
        if (pods.length === 0 || pods.some((p) => p.mode !== 'dual' && p.mode !== 'events_only'))
          this.fail(`backfill Job ${purpose} created before the Dual rollout completed on ${role}`);
      }
      const state = this.live.status?.state;
      if (state !== 'Dual' && state !== 'EventsOnly')
        this.fail(`backfill Job ${purpose} created in state ${state}`);
    }
    // At most one Job per step attempt: a new one only after a retry request (or a new pass).
    const running = [...this.jobs.values()].filter((j) => j.purpose === purpose && j.outcome === 'running');
    if (running.length > 0) this.fail(`second running Job for ${purpose}`);
    if (purpose.startsWith('backfill-')) {
      const step = purpose.replace(/^backfill-(retry-)?/, '');
      const made = new Set([...(this.created.get(purpose) ?? []), job.metadata!.name!]).size;
      const asked = this.retriesAsked.get(`backfill step ${step}`) ?? 0;
      const askedUnfail = this.retriesAsked.get(`un-fail backfill step ${step}`) ?? 0;
      if (made > 1 + asked + askedUnfail)
        this.fail(`${made} Jobs for ${purpose} with ${asked} retries asked`);
    }
  }

  private checkDeployment(d: V1Deployment): void {
    const env = d.spec!.template.spec!.containers[0]!.env!;
    checkEnvAccepted(env, `Deployment ${d.metadata!.name}`, (m) => this.fail(m));
    const mode = modeOf(env);
    const target = this.live.status?.target?.state;
    if (mode === 'events_only' && target !== 'EventsOnly')
      this.fail('EventsOnly rendered before its intent was recorded');
    if (this.everCommitted && mode !== 'events_only')
      this.fail(`Deployment rendered as ${mode} after the commitment`);
  }

  private windowOpen(): boolean {
    return windowAt(this.live.spec.maintenanceWindows, new Date(this.now)).open;
  }

  private checkStatusWrite(next: NonNullable<ObservabilityService['status']>, world: World): void {
    const prev = this.live.status;
    const committedBefore = prev?.state === 'EventsOnly' || prev?.target?.state === 'EventsOnly';
    if (committedBefore && next.target?.state !== 'EventsOnly')
      this.fail('target left EventsOnly after the commitment');
    if (prev?.state === 'EventsOnly' && next.state !== 'EventsOnly') this.fail('state left EventsOnly');
    if (!committedBefore && next.target?.state === 'EventsOnly') this.checkCutoverGates(world);
    const newMove =
      next.target !== undefined &&
      next.target.since !== prev?.target?.since &&
      prev?.state !== undefined &&
      next.target.state !== prev.state &&
      next.target.state !== 'Release3';
    if (newMove && !this.windowOpen())
      this.fail(`move to ${next.target!.state} recorded outside the maintenance windows`);
    if (next.target?.state === 'EventsOnly') this.everCommitted = true;
    if (next.state !== prev?.state && next.state !== undefined)
      this.checkCompletePass(prev?.state ?? 'Release3', next.state);
    this.checkPropagation(next, world);
  }

  /**
   * PropagationHealthy turns False only after failureThreshold stuck rounds (a round in which every
   * pod asked answered healthy breaks them), True only on a healthy one.
   */
  private checkPropagation(next: NonNullable<ObservabilityService['status']>, world: World): void {
    // A pass that returned before the gates (a rollout, a failed Job) did not take this round: its
    // streak is unchanged, and so is the model's count.
    const taken = JSON.stringify(next.probeStreak) !== JSON.stringify(this.live.status?.probeStreak);
    const probes = taken ? world.workerProbes : undefined;
    if (probes?.some((p) => p.result === 'stuck')) this.stuckRounds++;
    else if (probes && probes.length > 0 && probes.every((p) => p.result === 'healthy')) this.stuckRounds = 0;
    const c = next.conditions?.find((x) => x.type === 'PropagationHealthy');
    const before = this.live.status?.conditions?.find((x) => x.type === 'PropagationHealthy');
    // Only a condition this write changed was computed from this round.
    if (c?.status === before?.status && c?.reason === before?.reason && c?.message === before?.message)
      return;
    const threshold = this.live.spec.propagation?.failureThreshold ?? 3;
    if (c?.reason === 'PropagationStuck' && this.stuckRounds < threshold)
      this.fail(`PropagationHealthy False after ${this.stuckRounds} stuck rounds`);
    if (c?.reason === 'WorkersHealthy' && probes && !probes.every((p) => p.result === 'healthy'))
      this.fail('PropagationHealthy WorkersHealthy without a healthy round');
  }

  private checkCutoverGates(world: World): void {
    const spec = this.live.spec;
    const status = this.live.status!;
    if (status.state !== 'Dual') this.fail(`cutover intent recorded in state ${status.state}`);
    const stepsDone = enabledSteps(spec).every((s) => this.db.steps[s] === 'finished');
    const window = spec.cutover?.retentionWindow ? parseDuration(spec.cutover.retentionWindow) : undefined;
    const windowDone =
      window !== undefined &&
      status.dualSince !== undefined &&
      this.now - Date.parse(status.dualSince) >= window;
    if (!((backfillEnabled(spec) && stepsDone) || windowDone))
      this.fail('cutover before the historic data was covered');
    const probes = world.workerProbes ?? [];
    if (probes.length === 0 || probes.some((p) => p.result !== 'healthy'))
      this.fail('cutover with a failing worker probe');
    if (!world.producers.known || world.producers.producers.some((p) => p.consequence === 'refused'))
      this.fail('cutover with incompatible producers');
    if ((spec.cutover?.approval ?? 'Manual') === 'Manual') {
      const approved = this.live.metadata.annotations?.['observatory.dev/approve-cutover'];
      if (approved === undefined && spec.cutover?.approvedGeneration === undefined)
        this.fail('cutover without approval');
    }
  }

  private checkCompletePass(from: string, to: string): void {
    const allowed: Record<string, string[]> = {
      Release3: ['Legacy', 'Dual'],
      Legacy: ['Dual', 'Release3'],
      Dual: ['EventsOnly', 'Release3', 'Legacy'],
      EventsOnly: [],
    };
    if (from !== to && !allowed[from]?.includes(to)) this.fail(`state moved ${from} -> ${to}`);
    const wantMode =
      to === 'Release3' ? 'release3' : { Legacy: 'legacy', Dual: 'dual', EventsOnly: 'events_only' }[to];
    for (const role of ['web', 'worker'] as const) {
      const d = this.deployments.get(role);
      const hash = d && configHashOf(d.object);
      const want = d?.object.spec?.replicas ?? 1;
      if (
        !d ||
        d.pods.length !== want ||
        d.pods.some((p) => p.hash !== hash || !p.ready || p.mode !== wantMode)
      )
        this.fail(`state ${to} recorded before ${role} was rolled out`);
    }
    if (this.db.schema !== (to === 'Release3' ? 'v3' : 'v4'))
      this.fail(`state ${to} recorded on schema ${this.db.schema}`);
    if (from === to) return;
    if (this.lastState === 'EventsOnly') this.fail('left EventsOnly');
    this.lastState = to;
  }

  // ---- for assertions ----

  isConverged(): boolean {
    const status = this.live.status;
    const ready = status?.conditions?.find((c) => c.type === 'Ready');
    return (
      status?.state === desiredState(this.live.spec) &&
      ready?.status === 'True' &&
      ready.observedGeneration === this.live.metadata.generation
    );
  }
}

/** The observations chaos makes flaky: probe answers and whether the worker's reports answered. */
function flakyFacts(w: World): string {
  const probes = (w.workerProbes ?? []).map((p) => p.result).join(',');
  const producers = w.producers.known ? String(w.producers.producers.length) : 'unknown';
  return `probes=${probes} producers=${producers} backfill=${w.backfill.known}`;
}

function observe(d: SimDeployment): ObservedDeployment {
  const hash = configHashOf(d.object);
  const updated = d.pods.filter((p) => p.hash === hash);
  return {
    generation: d.generation,
    observedGeneration: d.observedGeneration,
    specReplicas: d.object.spec?.replicas ?? 1,
    replicas: d.pods.length,
    updatedReplicas: updated.length,
    readyReplicas: d.pods.filter((p) => p.ready).length,
    availableReplicas: d.pods.filter((p) => p.ready).length,
    configHash: hash,
    specHash: specHashOf(d.object),
    stalePods: d.pods.length - updated.length,
  };
}

function envRecord(env: V1EnvVar[]): Record<string, string | undefined> {
  return Object.fromEntries(env.filter((e) => e.value !== undefined).map((e) => [e.name, e.value]));
}

/** The write mode a container runs with ('release3' for a release 3 process). */
export function modeOf(env: V1EnvVar[]): string {
  const settings: ModeSettings = readModeSettings(envRecord(env));
  return settings.release === '3' ? 'release3' : settings.writeMode;
}

/** The server's own parser and rules must accept every rendered environment. */
export function checkEnvAccepted(env: V1EnvVar[], what: string, fail: (m: string) => void): void {
  const settings = readModeSettings(envRecord(env));
  const v = findViolations(settings);
  if (v.length > 0) fail(`${what}: server refuses ${v.map((x) => x.reason).join(', ')}`);
}
