/**
 * The worker autoscaler on the real node (#38): one deployment installed from the chart, with the
 * ingestion log in a bucket of an S3 server on the node IP (spec.blobStorage.ingestionLog, the web
 * answering once a write is logged) and spec.worker.autoscaling on. The analytics server is frozen
 * (SIGSTOP: the drain's writes hang, as with a store that stopped answering) while a burst of batch
 * requests is acknowledged, so the log's backlog ages past the target: the operator scales the
 * worker Deployment up, with an Event. Once the store answers again (SIGCONT) the backlog drains,
 * every acknowledged trace is in the store, and after the stabilization window the workers go
 * back down to minReplicas, with an Event.
 */
import { randomUUID } from 'node:crypto';
import { AppsV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalDeployment, localPlatform } from '../../cluster/scenario/local-deployment.ts';
import {
  applySpec,
  deploymentEnv,
  isTrue,
  type Obsvc,
  type Platform,
  type Project,
  SPECS,
} from '../../cluster/scenario/scenario.ts';
import { waitFor } from '../../cluster/wait.ts';
import type { ObservabilityServiceStatus } from '../../operator/api/v1alpha1.ts';
import { INGESTION_LOG_ENV, INGESTION_LOG_S3_ENV } from '../../server/contract/env.ts';
import { localCluster } from '../cluster/testing.ts';
import { type ExportBucket, startExportBucket } from '../fixtures/scenario/exports.ts';

const NAME = 'demo';
const NS = 'obs-autoscale';
const LOG_BUCKET = 'ingestion-log';
const TARGET_SECONDS = 10;
const WINDOW_SECONDS = 20;
const REQUESTS = 40;
const TRACES_PER_REQUEST = 3;

let d: LocalDeployment;
let p: Platform;
let s3: ExportBucket;
let project: Project;
let frozen = false;

const autoscaling = (o: Obsvc) => (o.status as ObservabilityServiceStatus | undefined)?.autoscaling;

/** The analytics server stops answering (its connections stay open), or answers again. */
function freezeStore(on: boolean): void {
  process.kill(d.ch.pid, on ? 'SIGSTOP' : 'SIGCONT');
  frozen = on;
}

async function workerReplicas(): Promise<number | undefined> {
  const apps = d.cluster.kubeconfig.makeApiClient(AppsV1Api);
  return (await apps.readNamespacedDeployment({ name: `${NAME}-worker`, namespace: NS })).spec?.replicas;
}

/** The Events the operator emitted for the object with this reason, oldest first. */
function events(reason: string): string[] {
  return d
    .events(`reason=${reason}`)
    .filter((e) => e.involvedObject.name === NAME)
    .map((e) => e.message);
}

/** `REQUESTS` batch requests of fresh traces, each acknowledged; returns the trace ids. */
async function burst(web: string): Promise<string[]> {
  const auth = `Basic ${Buffer.from(`${project.publicKey}:${project.secretKey}`).toString('base64')}`;
  const ids: string[] = [];
  for (let r = 0; r < REQUESTS; r++) {
    const batch = Array.from({ length: TRACES_PER_REQUEST }, () => {
      const id = randomUUID();
      ids.push(id);
      return {
        id: randomUUID(),
        type: 'trace-create',
        timestamp: new Date().toISOString(),
        body: { id, name: 'burst' },
      };
    });
    const res = await fetch(`${web}/api/public/ingestion`, {
      method: 'POST',
      headers: { authorization: auth, 'content-type': 'application/json' },
      body: JSON.stringify({ batch }),
      signal: AbortSignal.timeout(15_000),
    });
    const body = (await res.json()) as { errors: unknown[] };
    expect({ status: res.status, errors: body.errors }).toEqual({ status: 207, errors: [] });
  }
  return ids;
}

beforeAll(async () => {
  d = await LocalDeployment.start(localCluster(), NS);
  p = localPlatform(d);
  // The exports fixture's S3 server, Service and key Secret; the log gets a bucket of its own there.
  s3 = await startExportBucket(d);
  await s3.s3.createBucket(LOG_BUCKET);
  await d.installChart();
}, 600_000);
afterAll(async () => {
  if (frozen) freezeStore(false);
  await d?.stop();
  await s3?.stop();
}, 600_000);

describe('worker autoscaling on the ingestion backlog, on the real node', () => {
  it('deploys with the log rendered into web and worker, one worker, the backlog read', async () => {
    const { intervalSeconds: _, ...exportsBucket } = s3.blobStorage.exports as Record<string, unknown>;
    applySpec(p, NAME, {
      ...SPECS.legacy,
      blobStorage: {
        ingestionLog: { ...exportsBucket, bucket: LOG_BUCKET, prefix: 'log/', waitForStore: false },
      },
      worker: {
        replicas: 1,
        autoscaling: {
          enabled: true,
          minReplicas: 1,
          maxReplicas: 2,
          targetBacklogAgeSeconds: TARGET_SECONDS,
          scaleDownStabilizationSeconds: WINDOW_SECONDS,
        },
      },
    });
    const o = await d.waitFor(
      NAME,
      'Legacy and Ready with the backlog read',
      (x) =>
        x.status?.state === 'Legacy' &&
        isTrue(x, 'Ready') &&
        autoscaling(x)?.reason === 'BacklogWithinTarget' &&
        autoscaling(x)?.lastBacklogAgeSeconds === 0,
    );
    expect(autoscaling(o)).toMatchObject({ desiredReplicas: 1, currentReplicas: 1 });
    for (const role of ['web', 'worker'] as const) {
      const env = deploymentEnv(p, NAME, role);
      expect(env[INGESTION_LOG_S3_ENV.bucket], role).toBe(LOG_BUCKET);
      expect(env[INGESTION_LOG_ENV.waitForStore], role).toBe('false');
    }
    expect(await workerReplicas()).toBe(1);
    project = await p.createProject('autoscale');
  });

  let sent: string[] = [];
  it('a burst the store cannot take ages the backlog past the target: the workers scale up, with an Event', async () => {
    const web = await d.webUrl();
    // The web Service answers once a web Pod is ready and its endpoint is programmed.
    await waitFor(
      'the web Service answering',
      async () => ((await fetch(`${web}/api/public/health`).catch(() => undefined))?.ok ? true : undefined),
      { timeoutMs: 120_000, intervalMs: 500 },
    );
    freezeStore(true);
    sent = await burst(web);
    const up = await d.waitFor(
      NAME,
      'the workers scaled up',
      (x) => (autoscaling(x)?.desiredReplicas ?? 0) > 1,
      180_000,
    );
    expect(autoscaling(up)).toMatchObject({ desiredReplicas: 2 });
    expect(autoscaling(up)!.lastBacklogAgeSeconds).toBeGreaterThan(TARGET_SECONDS);
    await waitFor(
      'the worker Deployment at 2 replicas',
      async () => ((await workerReplicas()) === 2 ? true : undefined),
      {
        timeoutMs: 60_000,
        intervalMs: 1_000,
      },
    );
    const ups = await waitFor(
      'a WorkersScaledUp Event',
      async () => {
        const e = events('WorkersScaledUp');
        return e.length > 0 ? e : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 1_000 },
    );
    expect(ups[0]).toMatch(new RegExp(`over the target ${TARGET_SECONDS}s: 1 -> 2 worker\\(s\\)`));
    // Never past maxReplicas while the store stays frozen.
    const atMax = await d.waitFor(
      NAME,
      'at maxReplicas',
      (x) => autoscaling(x)?.reason === 'AtMaxReplicas',
      60_000,
    );
    expect(autoscaling(atMax)?.desiredReplicas).toBe(2);
  });

  it('once the store answers, the backlog drains into it and the workers go back to minReplicas, with an Event', async () => {
    freezeStore(false);
    await waitFor(
      'every acknowledged trace in the store',
      async () => {
        const [row] = await p.query<{ n: string }>(
          'SELECT count(DISTINCT id) AS n FROM traces WHERE project_id = {project:String} AND name = {name:String}',
          { project: project.projectId, name: 'burst' },
        );
        return Number(row?.n) === sent.length ? true : undefined;
      },
      { timeoutMs: 240_000, intervalMs: 2_000 },
    );
    const down = await d.waitFor(
      NAME,
      'the workers back at minReplicas',
      (x) => autoscaling(x)?.desiredReplicas === 1 && autoscaling(x)?.reason !== 'Held',
      240_000,
    );
    expect(autoscaling(down)?.lastBacklogAgeSeconds).toBeLessThanOrEqual(TARGET_SECONDS / 2);
    await waitFor(
      'the worker Deployment at 1 replica',
      async () => ((await workerReplicas()) === 1 ? true : undefined),
      {
        timeoutMs: 60_000,
        intervalMs: 1_000,
      },
    );
    expect(events('WorkersScaledDown')).toEqual([
      expect.stringMatching(new RegExp(`stayed drained for ${WINDOW_SECONDS}s .*: 2 -> 1 worker\\(s\\)`)),
    ]);
    await d.waitFor(NAME, 'Ready again', (x) => isTrue(x, 'Ready'), 120_000);
  });
});
