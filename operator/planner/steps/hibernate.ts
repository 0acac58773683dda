/**
 * spec.hibernate parks the deployment (after CloudNativePG's hibernation annotation): the
 * hibernation is recorded first (G5); the web scales to zero first, so no write is accepted any
 * more; with an ingestion log the workers then drain its backlog (bounded: the log keeps what is
 * left, and the workers drain it on wake) before they scale to zero too; a running backfill step's
 * Job is stopped, its step resuming from its last recorded chunk. Nothing after this step runs
 * while hibernated (no pass starts, no backfill step, no scheduled backup), and status keeps the
 * state, its settings, the image and the backfill cursor, so waking is the rollout of exactly that,
 * finished before anything else moves.
 * A pass in progress finishes first; the cutover is refused by validation. It owns Hibernated,
 * written once hibernation was asked for.
 */
import type { HibernationRecord, MigrationState } from '../../api/v1alpha1.ts';
import { passOf } from '../pass.ts';
import { type Step, type StepInput, StepOutput } from '../step.ts';
import { applyDeployments } from '../workloads.ts';

/** How long the workers may drain the ingestion log's backlog before they stop anyway. */
export const DRAIN_LIMIT_SECONDS = 600;
const POLL_SECONDS = 10;

const isBackfillJob = (purpose: string) => purpose.startsWith('backfill-');

/** Whether the workers may stop: no ingestion log, its backlog drained, or the drain's time is up. */
function workersMayStop(input: StepInput, record: HibernationRecord, webLeft: number): string | undefined {
  if (!input.spec.blobStorage?.ingestionLog) return undefined;
  const elapsed = (input.world.now.getTime() - Date.parse(record.since)) / 1000;
  if (elapsed >= DRAIN_LIMIT_SECONDS) return undefined;
  // Web Pods still terminating may still accept writes.
  if (webLeft > 0) return `${webLeft} web Pod(s) still terminating`;
  const b = input.world.ingestionBacklog;
  if (!b?.known) return 'the workers have not reported the ingestion log backlog';
  if (b.pendingFiles > 0)
    return `the workers drain the ingestion log: ${b.pendingFiles} file(s) left (at most ${DRAIN_LIMIT_SECONDS / 60} minutes in all)`;
  return undefined;
}

const livePods = (input: StepInput, role: 'web' | 'worker') => input.world.deployments[role]?.livePods ?? 0;

/** Web at zero, the workers too once they may stop; true once no Pod of either is left. */
function scaleDown(input: StepInput, out: StepOutput, record: HibernationRecord): boolean {
  const webLeft = livePods(input, 'web');
  const workersWait = workersMayStop(input, record, webLeft);
  const { state, deployedImage } = input.status;
  if (state !== undefined && deployedImage !== undefined) {
    const spec = {
      ...input.spec,
      web: { ...input.spec.web, replicas: 0 },
      worker: { ...input.spec.worker, replicas: workersWait ? input.spec.worker.replicas : 0 },
    };
    // Scaling down is no rollout to wait for: only the applies are kept, the Pods are counted below.
    const scratch = new StepOutput();
    applyDeployments({ ...input, spec, render: { ...input.render, spec } }, scratch, state, deployedImage);
    for (const [i, a] of scratch.actions.entries()) out.act(a, scratch.planned[i] ?? a.kind);
  }
  if (workersWait) {
    out.wait(POLL_SECONDS, `hibernation: the workers stop after the drain; ${workersWait}`);
    return false;
  }
  const left = webLeft + livePods(input, 'worker');
  if (left > 0) out.wait(POLL_SECONDS, `hibernation: ${left} web and worker Pod(s) still running`);
  return left === 0;
}

function hibernatedFacts(input: StepInput, at: string) {
  const state: MigrationState | 'none' = input.status.state ?? 'none';
  return { at, state, backfill: input.status.backfill?.progress ?? 'not started' };
}

/**
 * Brings web and worker back in the recorded state and image before anything else moves (no pass,
 * no backfill step, no gate counts a probe of workers still starting); then removes the record.
 */
function wake(input: StepInput, out: StepOutput, record: HibernationRecord) {
  const { state, deployedImage } = input.status;
  if (record.phase !== 'Waking') out.patch({ hibernation: { ...record, phase: 'Waking' } });
  if (
    state !== undefined &&
    deployedImage !== undefined &&
    !applyDeployments(input, out, state, deployedImage)
  ) {
    out.phase = 'Waking';
    out.set('Hibernated', 'Waking', { state });
    return out.stop();
  }
  out.patch({ hibernation: undefined });
  out.set('Hibernated', 'Awake');
  return out.next();
}

export const hibernateStep: Step = {
  name: 'hibernate',
  owns: ['Hibernated'],
  run(input) {
    const out = new StepOutput();
    const record = input.status.hibernation;
    if (!input.spec.hibernate) return record ? wake(input, out, record) : out.next();
    const { pass } = passOf(input);
    if (pass && (!record || record.phase === 'Waking')) {
      const detail = `the pass to ${pass.state} must finish first`;
      out.set('Hibernated', 'HibernationWaiting', { detail });
      out.waiting.push(`spec.hibernate: ${detail}`);
      return out.next();
    }
    out.phase = 'Hibernating';
    if (!record || record.phase === 'Waking') {
      out.patch({ hibernation: { phase: 'Draining', since: input.now } });
      out.set('Hibernated', 'Draining', {
        since: input.now,
        detail: 'recorded; the web scales to zero first',
      });
      out.planned.push('record the hibernation');
      out.requeue(0);
      return out.stop();
    }
    let stoppedJob = record.stoppedJob;
    // A Job being deleted stays listed until its Pod is gone (foreground deletion): until then its
    // step may still write a chunk, so the deployment is not parked yet.
    const running = input.world.jobs.filter((j) => isBackfillJob(j.purpose) && j.outcome === 'running');
    for (const j of running) {
      stoppedJob = j.name;
      out.act(
        {
          kind: 'deleteJob',
          name: j.name,
          reason: 'hibernation: the step resumes from its last chunk on wake',
        },
        `stop the backfill Job ${j.name} (its step resumes on wake)`,
      );
    }
    const stopped = stoppedJob ? { stoppedJob } : {};
    const parked = scaleDown(input, out, record);
    if (running.length > 0)
      out.wait(POLL_SECONDS, `hibernation: the backfill Job ${running[0]!.name} is stopping`);
    if (!parked || running.length > 0) {
      if (stoppedJob !== record.stoppedJob) out.patch({ hibernation: { ...record, ...stopped } });
      out.set('Hibernated', 'Draining', {
        since: record.since,
        detail: out.waiting.at(-1) ?? 'scaling down',
      });
      return out.stop();
    }
    const at = record.hibernatedAt ?? input.now;
    if (record.phase !== 'Hibernated')
      out.patch({ hibernation: { ...record, ...stopped, phase: 'Hibernated', hibernatedAt: at } });
    const facts = hibernatedFacts(input, at);
    out.set('Hibernated', 'Hibernated', facts);
    out.phase = 'Hibernated';
    return out.result({
      kind: 'hibernated',
      detail: `web and worker at zero since ${at}; state ${facts.state} kept`,
    });
  },
};
