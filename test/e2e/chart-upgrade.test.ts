/**
 * The operator installed from the Helm chart as a Pod upgrades a release 3 deployment receiving
 * traffic from the `langfuse` 3.x SDK and an OTel exporter through Legacy, Dual and the backfill
 * Jobs to EventsOnly. Faults in the same run: the operator Pod is deleted at two random moments,
 * and a backfill Job's Pod is deleted mid-step (the step fails, is retried, the chain completes).
 * The data is checked at the end: every legacy trace and observation is in events_full. Exports to
 * an S3 server reachable from the Pods run across the cutover: the legacy source writes its windows
 * before it and stops at it with its reason; the enriched source writes them after. While the
 * backfill runs, `helm upgrade` moves the operator to a second image version (observatory:next),
 * and no backfill step goes backwards meanwhile (checkpoints watched throughout).
 */
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import type { V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { S3_REGION } from '../../cluster/datastores/s3.ts';
import { LocalDeployment, localPlatform } from '../../cluster/scenario/local-deployment.ts';
import {
  afterCutover,
  condition,
  countData,
  createRelease3,
  deploymentEnv,
  isTrue,
  type Obsvc,
  type Platform,
  type Project,
  retryBackfill,
  sendTraffic,
  walkToEventsOnly,
} from '../../cluster/scenario/scenario.ts';
import { sleep, waitFor } from '../../cluster/wait.ts';
import type { ObservabilityServiceStatus } from '../../operator/api/v1alpha1.ts';
import { localCluster } from '../cluster/testing.ts';
import { backfillCheckpoint } from '../fixtures/backfill.ts';
import {
  createExport,
  type ExportBucket,
  type ExportState,
  HOUR,
  jsonlRows,
  sendSpansAt,
  startExportBucket,
  storeTime,
  type TimedSpan,
  waitForExport,
  windowEndOf,
  windowFile,
} from '../fixtures/scenario/exports.ts';
import {
  importNextImage,
  operatorImages,
  type StepCheckpoint,
  upgradeOperator,
  watchCheckpoints,
} from '../fixtures/scenario/operator-upgrade.ts';

const NAME = 'upgrade';
const BACKUP_BUCKET = 'backups';
let d: LocalDeployment;
let p: Platform;
let project: Project;
const operatorPodsDeleted: string[] = [];
let bucket: ExportBucket;
let exportProject: Project;
/** The first export window: three whole hours before the walk, so windows 0-2 are closed at once. */
const T0 = Math.floor(Date.now() / HOUR) * HOUR - 3 * HOUR;
const MINUTE = 60_000;
const LEGACY = 'LEGACY_TRACES_OBSERVATIONS';
const ENRICHED = 'ENRICHED_OBSERVATIONS';

/** Deletes the operator Pod after a random delay, as a node drain or an eviction would. */
async function deleteOperatorPodSoon(maxDelayMs = 5_000) {
  await sleep(Math.floor(Math.random() * maxDelayMs));
  operatorPodsDeleted.push(await d.deleteOperatorPod());
}

/** The step's checkpoint in background_migrations: chunks done and in all. */
const checkpoint = (step: number) => backfillCheckpoint(d.pg.url, step);

/**
 * Deletes the Pod of backfill step `step` in the middle of its work: once its checkpoint shows some
 * chunks done and some not (spec.backfill throttles the steps so that moment lasts seconds).
 */
async function killBackfillPodMidStep(step: number): Promise<{ pod: string; done: number; total: number }> {
  const progress = await waitFor(
    `backfill step ${step} part-way through its chunks`,
    async () => {
      const c = await checkpoint(step);
      return c.done > 0 && c.done < c.total ? c : undefined;
    },
    { timeoutMs: 240_000, intervalMs: 100 },
  );
  const pods = await d.core().listNamespacedPod({
    namespace: d.ns,
    labelSelector: `app.kubernetes.io/component=backfill-${step}`,
  });
  const running = pods.items.find(
    (x: V1Pod) => x.status?.phase === 'Running' && !x.metadata?.deletionTimestamp,
  );
  if (!running?.metadata?.name)
    throw new Error(`no running backfill-${step} Pod at ${progress.done}/${progress.total}`);
  await d.core().deleteNamespacedPod({ name: running.metadata.name, namespace: d.ns, gracePeriodSeconds: 0 });
  return { pod: running.metadata.name, ...progress };
}

/** Window `w` of an export as rows compared by what was sent in it. */
async function windowRows(exportId: string, source: string, w: number) {
  const rows = jsonlRows(await bucket.text(windowFile(exportProject.projectId, exportId, source, T0, w)));
  return rows
    .map((r) => ({
      kind: r['kind'],
      id: r['id'],
      trace_id: r['trace_id'],
      name: r['name'],
      start: storeTime(r['start_time']),
    }))
    .sort((a, b) => String(a.id).localeCompare(String(b.id)));
}
const sentIn = (spans: TimedSpan[], w: number) =>
  spans.filter((s) => s.time >= T0 + w * HOUR && s.time < T0 + (w + 1) * HOUR);
const byId = (a: { id: string }, b: { id: string }) => a.id.localeCompare(b.id);

/** At Legacy: spans in windows 0 and 1, a legacy export that writes windows 0-2 with exactly them. */
async function legacyExportBeforeCutover(): Promise<{ spans: TimedSpan[]; exported: ExportState }> {
  const spans = await sendSpansAt(await p.webUrl(), exportProject, [
    T0 + 10 * MINUTE,
    T0 + HOUR + 10 * MINUTE,
  ]);
  await waitFor(
    'the export spans in the legacy tables',
    async () => {
      const [c] = await p.query<{ t: string; o: string }>(
        `SELECT (SELECT count() FROM traces WHERE project_id = {project:String}) AS t,
                (SELECT count() FROM observations WHERE project_id = {project:String}) AS o`,
        { project: exportProject.projectId },
      );
      return Number(c?.t) >= spans.length && Number(c?.o) >= spans.length ? c : undefined;
    },
    { timeoutMs: 60_000, intervalMs: 500 },
  );
  const created = await createExport(p, exportProject, LEGACY, T0);
  const exported = await waitForExport(
    p,
    exportProject,
    created.id,
    'legacy export windows 0-2',
    (e) => e.windowsWritten >= 3,
  );
  for (const w of [0, 1, 2]) {
    expect(await windowRows(created.id, LEGACY, w)).toEqual(
      sentIn(spans, w)
        .flatMap((s) => [
          { kind: 'trace', id: s.traceId, trace_id: s.traceId, name: s.name, start: s.time },
          { kind: 'observation', id: s.spanId, trace_id: s.traceId, name: s.name, start: s.time },
        ])
        .sort(byId),
    );
  }
  return { spans, exported };
}

/**
 * At EventsOnly: a span in window 2 (after the legacy export wrote it), the legacy export stopped
 * with its reason and no window closing after the cutover, and an enriched export whose windows
 * 0-2 hold every span, the ones sent before the cutover (moved by the backfill) and after.
 */
async function exportsAfterCutover(
  before: { spans: TimedSpan[]; exported: ExportState },
  atApproval: ExportState,
  cutoverAt: number,
) {
  const late = await sendSpansAt(await p.webUrl(), exportProject, [T0 + 2 * HOUR + 10 * MINUTE]);
  const stopped = await waitForExport(
    p,
    exportProject,
    before.exported.id,
    'legacy export stopped at the cutover',
    (e) => /cutover/.test(e.lastSkipReason ?? ''),
  );
  expect(stopped.lastSkipReason).toMatch(/events_only/);
  const added = stopped.files.filter((f) => !atApproval.files.includes(f));
  // Only a window that closed before the cutover may have been added since the approval.
  for (const key of added) expect(windowEndOf(key)).toBeLessThanOrEqual(cutoverAt);
  expect(stopped.files.slice(0, 3)).toEqual(before.exported.files.slice(0, 3));
  // The span sent after the cutover is in no legacy file.
  expect(await windowRows(before.exported.id, LEGACY, 2)).toEqual([]);

  const created = await createExport(p, exportProject, ENRICHED, T0);
  await waitForExport(
    p,
    exportProject,
    created.id,
    'enriched export windows 0-2',
    (e) => e.windowsWritten >= 3,
  );
  const all = [...before.spans, ...late];
  for (const w of [0, 1, 2]) {
    expect((await windowRows(created.id, ENRICHED, w)).map(({ kind: _, ...r }) => r)).toEqual(
      sentIn(all, w)
        .map((s) => ({ id: s.spanId, trace_id: s.traceId, name: s.name, start: s.time }))
        .sort(byId),
    );
  }
  return {
    legacy: stopped,
    enriched: await waitForExport(p, exportProject, created.id, 'enriched export', () => true),
  };
}

/**
 * Both backups were taken, verified and recorded, each finished before the schema Job of the pass
 * it protects was created: the move to release 4 (from release 3 in Legacy) and the cutover (from
 * Dual); their manifests are in the bucket.
 */
async function backupsBeforeTheirSteps(final: Obsvc): Promise<void> {
  const backups = (final.status as ObservabilityServiceStatus).backups ?? [];
  expect(backups.map((b) => [b.trigger, b.result, b.release, b.writeMode])).toEqual([
    ['Cutover', 'Complete', '4', 'Dual'],
    ['Release4', 'Complete', '3', 'Legacy'],
  ]);
  const jobs = (
    JSON.parse(p.kubectl(['get', 'jobs', '-n', p.ns, '-o', 'json']).stdout).items as {
      metadata: { name: string; creationTimestamp: string };
      status: { completionTime?: string };
    }[]
  ).sort((a, b) => Date.parse(a.metadata.creationTimestamp) - Date.parse(b.metadata.creationTimestamp));
  for (const b of backups) {
    expect(b.objects).toBeGreaterThan(0);
    const job = jobs.find((j) => j.metadata.name === b.job)!;
    const done = Date.parse(job.status.completionTime!);
    // The first schema Job after the backup's own came after it finished.
    const next = jobs.find(
      (j) =>
        j.metadata.name.startsWith(`${NAME}-migrate-`) &&
        Date.parse(j.metadata.creationTimestamp) >= Date.parse(job.metadata.creationTimestamp),
    )!;
    expect(Date.parse(next.metadata.creationTimestamp), b.id).toBeGreaterThanOrEqual(done - 1_000);
    const listed = await bucket.s3.client.send(
      new ListObjectsV2Command({ Bucket: BACKUP_BUCKET, Prefix: `walk/${b.id}/manifest.json` }),
    );
    expect(listed.Contents ?? [], b.id).toHaveLength(1);
  }
}

beforeAll(async () => {
  d = await LocalDeployment.start(localCluster(), 'obs');
  bucket = await startExportBucket(d);
  await d.installChart();
  await importNextImage(d.cluster, (line) => console.log(line));
  await bucket.s3.createBucket(BACKUP_BUCKET);
  // The export bucket's keys (Secret blob-storage) open the backup bucket on the same server.
  const credentials = { name: 'blob-storage' };
  p = {
    ...localPlatform(d),
    specExtras: {
      blobStorage: bucket.blobStorage,
      // The node's address: the backup Jobs' Pods and ClickHouse's own BACKUP ... TO S3 both reach it.
      backup: {
        destination: {
          bucket: BACKUP_BUCKET,
          prefix: 'walk/',
          region: S3_REGION,
          endpoint: bucket.s3.endpoint,
          forcePathStyle: true,
          accessKeyIdSecretRef: { ...credentials, key: 'accessKeyId' },
          secretAccessKeySecretRef: { ...credentials, key: 'secretAccessKey' },
        },
      },
    },
  };
});
afterAll(async () => {
  try {
    await d?.stop();
  } finally {
    await bucket?.stop();
  }
});

it('walks a release 3 deployment to EventsOnly with the chart-installed operator, through faults, losing nothing', async () => {
  const created = await createRelease3(p, NAME);
  project = created.project;
  expect(created.o.status?.observedGeneration).toBe(created.o.metadata.generation);
  expect(deploymentEnv(p, NAME, 'web')['SERVICE_RELEASE']).toBe('3');
  exportProject = await p.createProject('scenario-exports');
  const historic = await sendTraffic(p, project, 'v3');
  const v3 = await waitFor(
    'release 3 traffic in the legacy tables',
    async () => {
      const c = await countData(p, project.projectId);
      return c.traces >= 10 && c.observations >= 15 ? c : undefined;
    },
    { timeoutMs: 60_000, intervalMs: 1_000 },
  );
  expect(v3.eventsFull).toBe(0);

  let killedStep = 0;
  let killedPod = '';
  let legacyExport: Awaited<ReturnType<typeof legacyExportBeforeCutover>> | undefined;
  let legacyAtApproval: ExportState | undefined;
  let watch: Awaited<ReturnType<typeof watchCheckpoints>> | undefined;
  let atUpgrade: StepCheckpoint[] = [];
  let upgradeMs = 0;
  const { final, steps, sent } = await walkToEventsOnly(p, NAME, project, {
    operatorBackups: true,
    // Small, throttled chunks (spec.backfill, which the Jobs write into each step's row) make each
    // backfill step last long enough to be killed mid-way.
    backfillTuning: { chunkRows: 2, throttleMs: 300 },
    atLegacy: async (o) => {
      expect(isTrue(o, 'PreflightPassed')).toBe(true);
      legacyExport = await legacyExportBeforeCutover();
      for (const component of ['web', 'worker'] as const) {
        const env = deploymentEnv(p, NAME, component);
        expect(env['SERVICE_RELEASE'] ?? '4').toBe('4');
        expect(env['SERVICE_MIGRATION_V4_WRITE_MODE']).toBe('legacy');
      }
      // The first fault: the operator Pod goes away while Dual is being applied.
      void deleteOperatorPodSoon();
    },
    atDual: async () => {
      for (const component of ['web', 'worker'] as const) {
        const env = deploymentEnv(p, NAME, component);
        expect(env['SERVICE_MIGRATION_V4_WRITE_MODE']).toBe('dual');
        expect(env['SERVICE_MIGRATION_V4_NATIVE_OTEL_BEHAVIOUR']).toBe('dual_write');
      }
      expect(
        deploymentEnv(p, NAME, 'worker')['SERVICE_BACKGROUND_MIGRATION_V4_ENABLE_HISTORIC_BACKFILL'],
      ).toBe('true');
    },
    duringBackfill: async () => {
      watch = await watchCheckpoints(d.pg.url);
      const checkpoints = watch;
      // A new operator version, rolled out by helm as soon as the backfill has begun.
      const upgrade = (async () => {
        atUpgrade = await waitFor(
          'the backfill begun',
          async () => {
            const now = checkpoints.latest();
            return now.some((s) => s.done > 0) ? now : undefined;
          },
          { timeoutMs: 240_000, intervalMs: 100 },
        );
        const started = performance.now();
        await upgradeOperator(d);
        upgradeMs = performance.now() - started;
      })();
      upgrade.catch(() => {});
      // Steps 2 and 3 work through the observations, the largest source.
      killedStep = 2 + Math.floor(Math.random() * 2);
      const killed = await killBackfillPodMidStep(killedStep);
      killedPod = `${killed.pod} at chunk ${killed.done}/${killed.total}`;
      const stalled = await p.waitFor(NAME, `Stalled on backfill step ${killedStep}`, (x) =>
        isTrue(x, 'Stalled'),
      );
      expect(condition(stalled, 'Stalled')?.message).toMatch(/retry-backfill/);
      // The second fault: the operator Pod goes away around the retry.
      retryBackfill(p, NAME, killedStep);
      await deleteOperatorPodSoon();
      await upgrade;
    },
    beforeApproval: async (o) => {
      expect(isTrue(o, 'PropagationHealthy')).toBe(true);
      expect(isTrue(o, 'BackfillComplete')).toBe(true);
      expect(o.status?.state).toBe('Dual');
      legacyAtApproval = await waitForExport(
        p,
        exportProject,
        legacyExport!.exported.id,
        'legacy export',
        () => true,
      );
    },
  });
  const cutoverAt = Date.now();
  expect(killedStep).toBeGreaterThan(0);
  // The upgrade came while the backfill was running, and nothing went backwards through it.
  expect(atUpgrade.some((s) => !s.finished)).toBe(true);
  expect(await operatorImages(d)).toEqual(['observatory:next']);
  const watched = await watch!.stop();
  expect(watched.regressions).toEqual([]);
  // Every chunked step ran to its last chunk (step 5, dropping the sorting tables, waits for cleanup).
  const chunked = watched.latest.filter((s) => s.total > 0);
  expect(chunked.length).toBeGreaterThan(0);
  expect(chunked.filter((s) => !s.finished || s.done < s.total)).toEqual([]);
  expect(operatorPodsDeleted).toHaveLength(2);
  await backupsBeforeTheirSteps(final);
  expect(final.status?.observedGeneration).toBe(final.metadata.generation);
  for (const component of ['web', 'worker'] as const) {
    const env = deploymentEnv(p, NAME, component);
    expect(env['SERVICE_MIGRATION_V4_WRITE_MODE']).toBe('events_only');
    expect(env['SERVICE_MIGRATION_V4_NATIVE_OTEL_BEHAVIOUR']).toBe('direct');
  }

  // Every trace and observation of release 3, Legacy and Dual is in events_full.
  const moved = await countData(p, project.projectId);
  const sdkTraces = [historic, ...sent].flatMap((s) => s.sdkTraces);
  const otelTraces = [historic, ...sent].flatMap((s) => s.otelTraces);
  expect(moved.traces).toBe(sdkTraces.length + otelTraces.length);
  // Each SDK trace carries a span and a generation, each OTel trace a root span and a child.
  expect(moved.observations).toBe(2 * sdkTraces.length + 2 * otelTraces.length);
  expect(moved.missingTraces).toBe(0);
  expect(moved.missingObservations).toBe(0);
  expect(moved.eventsFull).toBeGreaterThanOrEqual(moved.traces + moved.observations - otelTraces.length);

  const after = await afterCutover(p, project);
  expect(after.batchStatus).toBe(207);
  expect(after.batchBody.errors.map((e) => e.status)).toEqual([400, 400]);
  expect(after.legacyStatus).toBe(404);
  expect(after.directRows).toBeGreaterThan(0);
  // Nothing new in the legacy tables after the cutover.
  expect((await countData(p, project.projectId)).traces).toBe(moved.traces);
  const exports = await exportsAfterCutover(legacyExport!, legacyAtApproval!, cutoverAt);
  console.log(
    `exports: legacy ${exports.legacy.windowsWritten} windows before the cutover, then "${exports.legacy.lastSkipReason}"; enriched ${exports.enriched.windowsWritten} windows, ${exports.enriched.rowsWritten} rows`,
  );
  console.log(
    `operator upgraded by helm in ${(upgradeMs / 1000).toFixed(1)}s at ${atUpgrade.map((s) => `${s.done}/${s.total}${s.finished ? ' done' : ''}`).join(', ')}; ${watched.readings} checkpoint readings; steps: ${steps.map((s) => `${s.name} ${(s.ms / 1000).toFixed(1)}s`).join('; ')}; killed backfill step ${killedStep} (${killedPod}); operator pods deleted ${operatorPodsDeleted.join(', ')}`,
  );
});
