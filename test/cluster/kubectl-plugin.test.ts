// `kubectl observatory logs` on the real node: the log of the current backfill Job's Pod, read by
// the plugin through the API server's Pod log endpoint (the kubelet serves it), with kubectl
// finding the plugin on PATH. The Job stands in for the operator's backfill Job: the object's
// status names it through the status subresource, as the operator writes it. Then `report`: a
// support bundle of the object with a Job it owns whose Pod logs a Secret's value, searched file by
// file for every Secret value (raw and base64).
import { mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { V1Container, V1Job, V1ObjectMeta } from '@kubernetes/client-node';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { waitEstablished } from '../../cluster/crds.ts';
import type { LocalClusterClient } from '../../cluster/local-cluster.ts';
import { crdDir } from '../../cluster/paths.ts';
import { waitFor } from '../../cluster/wait.ts';
import { statusPatch } from '../fixtures/operator/status-patch.ts';
import { userManifest } from '../fixtures/operator/user-manifest.ts';
import { clients, createNamespace, deleteNamespaces, kubectlObservatory, localCluster } from './testing.ts';

let cluster: LocalClusterClient;
const ns = 'kubectl-plugin';
const JOB = 'demo-backfill-2-plugin';
const CRD = 'observabilityservices.observatory.dev';

const plugin = (args: string[]) => kubectlObservatory(cluster, args);

beforeAll(async () => {
  cluster = localCluster();
  // The chart installs the CRD in the operator's files; this file applies it alone and removes it.
  await cluster.kubectl(['apply', '-f', join(crdDir, 'observatory.dev_observabilityservices.yaml')]);
  // Polled, not `kubectl wait`: that errors while the new CRD has no status conditions yet.
  await waitEstablished(cluster.kubeconfig, [CRD], 60_000);
  await createNamespace(cluster, ns);
});
afterAll(async () => {
  await deleteNamespaces(cluster, [ns]);
  await cluster.kubectl(['delete', 'crd', CRD, '--ignore-not-found', '--wait=true']);
});

/** A Job that runs one container of the local image once, restricted as the operator's Jobs are. */
const nodeJob = (
  metadata: V1ObjectMeta,
  container: Pick<V1Container, 'name' | 'command' | 'env'>,
): V1Job => ({
  metadata,
  spec: {
    backoffLimit: 0,
    template: {
      spec: {
        restartPolicy: 'Never',
        terminationGracePeriodSeconds: 1,
        containers: [
          {
            image: 'observatory:dev',
            imagePullPolicy: 'Never',
            securityContext: {
              runAsNonRoot: true,
              readOnlyRootFilesystem: true,
              allowPrivilegeEscalation: false,
            },
            ...container,
          },
        ],
      },
    },
  },
});

const jobComplete = (name: string) =>
  waitFor(
    `Job ${name} complete`,
    async () => {
      const j = await clients(cluster).batch.readNamespacedJob({ name, namespace: ns });
      return j.status?.conditions?.some((c) => c.type === 'Complete' && c.status === 'True');
    },
    { timeoutMs: 180_000, intervalMs: 1000 },
  );

it("prints the log of the current backfill Job's Pod, whole and its tail", async () => {
  const manifest = join(tmpdir(), `observatory-plugin-${process.pid}.json`);
  await writeFile(
    manifest,
    JSON.stringify(userManifest('demo', ns, { writeMode: 'Dual', upgrade: { backupConfirmed: true } })),
  );
  await cluster.kubectl(['create', '-f', manifest]);

  const none = await plugin(['logs', 'demo', '-n', ns]);
  expect(none.code).toBe(1);
  expect(none.stderr).toContain('demo has no current backfill Job');

  await clients(cluster).batch.createNamespacedJob({
    namespace: ns,
    body: nodeJob(
      { name: JOB },
      {
        name: 'backfill',
        command: [
          'node',
          '-e',
          "for (const l of ['step 2: chunk 1/2', 'step 2: chunk 2/2', 'step 2 finished']) console.log(l)",
        ],
      },
    ),
  });
  const status = {
    observedGeneration: 1,
    state: 'Dual',
    backfill: { completedSteps: 1, totalSteps: 4, currentStep: 2, currentJob: JOB, progress: '1/4' },
  };
  await cluster.kubectl(statusPatch('demo', ns, status));
  await jobComplete(JOB);

  const all = await plugin(['logs', 'demo', '-n', ns]);
  expect(all.stderr).toMatch(new RegExp(`^Pod ${JOB}-\\w+ of Job ${JOB}\\n$`));
  expect(all.code).toBe(0);
  expect(all.stdout).toBe('step 2: chunk 1/2\nstep 2: chunk 2/2\nstep 2 finished\n');
  const tail = await plugin(['logs', '--tail', '1', '-n', ns]);
  expect(tail.code).toBe(0);
  expect(tail.stdout).toBe('step 2 finished\n');
});

it('writes a support bundle with the owned Job, its Pod log and no Secret value anywhere', async () => {
  const secret = {
    database: `postgres://obs:pw-${process.pid}-db@postgres:5432/obs`,
    clickhouse: `http://default:ch-${process.pid}-secret@clickhouse:8123`,
    redis: `redis://:rd-${process.pid}-secret@redis:6379`,
  };
  await clients(cluster).core.createNamespacedSecret({
    namespace: ns,
    body: { metadata: { name: 'datastores' }, stringData: secret },
  });
  const owner = await cluster.kubectl(['get', 'obsvc', 'demo', '-n', ns, '-o', 'json']);
  const { uid } = JSON.parse(owner).metadata as { uid: string };
  const job = 'demo-preflight-report';
  await clients(cluster).batch.createNamespacedJob({
    namespace: ns,
    body: nodeJob(
      {
        name: job,
        ownerReferences: [
          {
            apiVersion: 'observatory.dev/v1alpha1',
            kind: 'ObservabilityService',
            name: 'demo',
            uid,
            controller: true,
          },
        ],
      },
      {
        name: 'preflight',
        // A careless log line that repeats a credential: the bundle must not carry it.
        command: ['node', '-e', 'console.log("preflight connecting to " + process.env.DATABASE_URL)'],
        env: [{ name: 'DATABASE_URL', valueFrom: { secretKeyRef: { name: 'datastores', key: 'database' } } }],
      },
    ),
  });
  await jobComplete(job);

  const dir = join(await mkdtemp(join(tmpdir(), 'observatory-report-')), 'bundle');
  const r = await plugin(['report', 'demo', '-n', ns, '-o', dir]);
  expect(r.code, r.stderr).toBe(0);
  const files = (await readdir(dir, { recursive: true, withFileTypes: true }))
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name).slice(dir.length + 1))
    .sort();
  expect(files).toEqual(
    expect.arrayContaining([
      'index.json',
      'observabilityservice.yaml',
      'events.yaml',
      `objects/Job/${job}.yaml`,
      'objects/Secret/datastores.yaml',
    ]),
  );
  const log = files.find((f) => f.startsWith(`logs/${job}-`) && f.endsWith('/preflight.log'));
  expect(log, files.join('\n')).toBeDefined();
  expect(await readFile(join(dir, log!), 'utf8')).toBe('preflight connecting to [REDACTED]\n');
  const values = Object.values(secret).flatMap((v) => [v, Buffer.from(v).toString('base64')]);
  for (const f of files) {
    const text = await readFile(join(dir, f), 'utf8');
    for (const v of values) expect(text.includes(v), `${f} holds a Secret value`).toBe(false);
  }
});
