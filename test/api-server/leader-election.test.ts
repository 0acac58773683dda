// Two operator processes (the bundle the chart runs) against one API server: only the Lease holder
// reconciles (the follower's reconcile count, scraped from its /metrics, stays 0 through an
// annotation and two spec changes), and killing the leader hands the work over to the follower,
// which then reconciles the next change. Nothing runs Pods here: the operator's writes (status,
// Deployments) are what is judged.
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { AppsV1Api, CoordinationV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../../cluster/paths.ts';
import { freePort } from '../../cluster/ports.ts';
import { waitFor } from '../../cluster/wait.ts';
import { type ControlPlane, startControlPlane } from '../fixtures/api-server.ts';
import { statusPatch } from '../fixtures/operator/status-patch.ts';
import { userManifest } from '../fixtures/operator/user-manifest.ts';
import { scrapeOperator } from '../tools/operator-metrics.ts';

const NS = 'obs';
const NAME = 'demo';
const LEASE = 'obs-leader-test';
// Two Node processes and an API server on a loaded two-core machine.
const SLOW = 240_000;

let api: ControlPlane;
const operators: Operator[] = [];

interface Operator {
  id: string;
  child: ChildProcess;
  metricsPort: number;
  log: string[];
}

async function startOperator(id: string): Promise<Operator> {
  const [metricsPort, healthPort] = [await freePort(), await freePort()];
  const child = spawn(process.execPath, [join(repoRoot, 'operator/dist/operator.mjs')], {
    env: {
      PATH: process.env['PATH'] ?? '',
      KUBECONFIG: api.kubeconfigPath,
      POD_NAME: id,
      OPERATOR_NAMESPACE: NS,
      OPERATOR_LEASE_NAME: LEASE,
      OPERATOR_METRICS_PORT: String(metricsPort),
      OPERATOR_HEALTH_PORT: String(healthPort),
      OPERATOR_BIND_ADDRESS: '127.0.0.1',
      OPERATOR_SECRET_ROLLOUTS: 'false',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const op: Operator = { id, child, metricsPort, log: [] };
  for (const s of [child.stdout, child.stderr]) s?.on('data', (b: Buffer) => op.log.push(b.toString()));
  operators.push(op);
  return op;
}

/** The operator's own /metrics, as Prometheus scrapes it. */
const scrape = (op: Operator) => scrapeOperator(`http://127.0.0.1:${op.metricsPort}/metrics`);

const custom = () => api.kubeconfig.makeApiClient(CustomObjectsApi);
const object = async () =>
  (await custom().getNamespacedCustomObject({
    group: 'observatory.dev',
    version: 'v1alpha1',
    plural: 'observabilityservices',
    namespace: NS,
    name: NAME,
  })) as {
    metadata: { generation: number; annotations?: Record<string, string> };
    status?: { observedGeneration?: number };
  };

/** Waits until the operator reconciled the current generation (observedGeneration caught up). */
async function reconciled(what: string) {
  return waitFor(
    what,
    async () => {
      const o = await object();
      return o.status?.observedGeneration === o.metadata.generation ? o : undefined;
    },
    { timeoutMs: 90_000, intervalMs: 500 },
  );
}

async function webReplicas(): Promise<number | undefined> {
  const apps = api.kubeconfig.makeApiClient(AppsV1Api);
  const d = await apps
    .readNamespacedDeployment({ name: `${NAME}-web`, namespace: NS })
    .catch(() => undefined);
  return d?.spec?.replicas;
}

async function patchSpec(patch: Record<string, unknown>) {
  await api.kubectl(['patch', 'obsvc', NAME, '-n', NS, '--type=merge', '-p', JSON.stringify(patch)]);
}

beforeAll(async () => {
  api = await startControlPlane();
  await api.kubectl(['create', 'namespace', NS]);
  const manifest = userManifest(NAME, NS, { release: '3', web: { replicas: 1 } });
  await api.kubectl(['create', '-f', '-'], JSON.stringify(manifest));
  // Release 3 as a finished pass left it (no node runs its Jobs here): each pass keeps the
  // Deployments as rendered, so every spec change shows in them.
  const since = new Date().toISOString();
  const status = {
    state: 'Release3',
    deployedImage: 'observatory:dev',
    target: { state: 'Release3', since, image: 'observatory:dev', schemaMigrated: true },
  };
  await api.kubectl(statusPatch(NAME, NS, status));
}, SLOW);
afterAll(async () => {
  for (const op of operators) op.child.kill('SIGKILL');
  await api?.stop();
});

describe('two operator processes, one Lease', () => {
  it(
    'only the leader reconciles; the follower stays at 0 reconciles through every change',
    async () => {
      const a = await startOperator('operator-a');
      await waitFor('operator-a leading', async () => ((await scrape(a))?.leader === 1 ? true : undefined), {
        timeoutMs: 60_000,
        intervalMs: 500,
      });
      await reconciled('the first reconcile');
      const b = await startOperator('operator-b');
      const standing = await waitFor('operator-b serving its metrics', () => scrape(b), {
        timeoutMs: 60_000,
        intervalMs: 500,
      });
      expect(standing.leader).toBe(0);
      await api.kubectl(['annotate', 'obsvc', NAME, '-n', NS, 'example.com/touched=1']);
      await patchSpec({ spec: { web: { replicas: 2 } } });
      await reconciled('replicas 2 reconciled');
      await waitFor('web at 2 replicas', async () => ((await webReplicas()) === 2 ? true : undefined), {
        timeoutMs: 60_000,
        intervalMs: 500,
      });
      await patchSpec({ spec: { worker: { replicas: 2 } } });
      await reconciled('worker replicas reconciled');
      const [leader, follower] = [await scrape(a), await scrape(b)];
      expect(leader?.reconciles, a.log.join('')).toBeGreaterThan(0);
      expect(follower, b.log.join('')).toEqual({ reconciles: 0, leader: 0 });
      const lease = await api.kubeconfig
        .makeApiClient(CoordinationV1Api)
        .readNamespacedLease({ name: LEASE, namespace: NS });
      expect(lease.spec?.holderIdentity).toBe('operator-a');
    },
    SLOW,
  );

  it(
    'killing the leader hands over: the follower takes the Lease and reconciles the next change',
    async () => {
      const [a, b] = operators as [Operator, Operator];
      a.child.kill('SIGKILL');
      await waitFor('operator-b leading', async () => ((await scrape(b))?.leader === 1 ? true : undefined), {
        timeoutMs: 90_000,
        intervalMs: 500,
      });
      await patchSpec({ spec: { web: { replicas: 3 } } });
      await reconciled('replicas 3 reconciled by operator-b');
      await waitFor('web at 3 replicas', async () => ((await webReplicas()) === 3 ? true : undefined), {
        timeoutMs: 60_000,
        intervalMs: 500,
      });
      expect((await scrape(b))?.reconciles, b.log.join('')).toBeGreaterThan(0);
    },
    SLOW,
  );
});
