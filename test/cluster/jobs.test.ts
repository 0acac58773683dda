// Jobs and restart policies on the local cluster: the real Job controller counts the Pods the node
// agent ends Succeeded or Failed by exit code.
import type { V1Job, V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../cluster/wait.ts';
import { type Cluster, startCluster } from './harness.ts';
import { clients, createNamespace } from './testing.ts';

function job(name: string, script: string, backoffLimit: number): V1Job {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name },
    spec: {
      backoffLimit,
      template: {
        spec: {
          restartPolicy: 'Never',
          containers: [{ name: 'main', image: 'busybox:1.37', command: ['sh', '-c', script] }],
        },
      },
    },
  };
}

describe('Jobs on the local cluster', () => {
  let cluster: Cluster;
  let ns: string;

  beforeAll(async () => {
    // About the cluster itself: the project's CRDs (crds/) are left to the operator's suites.
    cluster = await startCluster({ crdDirs: [], restartBackoff: { baseMs: 500, maxMs: 5000 } });
    ns = await createNamespace(cluster, 'jobs');
    await waitFor('default service account in the namespace', () =>
      clients(cluster).core.readNamespacedServiceAccount({ name: 'default', namespace: ns }),
    );
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  const jobPods = async (name: string): Promise<V1Pod[]> =>
    (await clients(cluster).core.listNamespacedPod({ namespace: ns, labelSelector: `job-name=${name}` }))
      .items;

  it('a Job whose container exits 0 completes', async () => {
    const { batch } = clients(cluster);
    await batch.createNamespacedJob({ namespace: ns, body: job('ok', 'echo "work done"; exit 0', 3) });
    const done = await waitFor('Job complete', async () => {
      const j = await batch.readNamespacedJob({ name: 'ok', namespace: ns });
      return j.status?.conditions?.some((c) => c.type === 'Complete' && c.status === 'True') ? j : undefined;
    });
    expect(done.status?.succeeded).toBe(1);
    const [pod] = await jobPods('ok');
    expect(pod?.status?.phase).toBe('Succeeded');
    expect(pod?.status?.containerStatuses?.[0]?.state?.terminated).toMatchObject({
      exitCode: 0,
      reason: 'Completed',
    });
    expect(await cluster.logs(ns, pod?.metadata?.name ?? '', 'main')).toContain('work done');
  });

  it('a Job whose container exits 1 with backoffLimit 1 ends Failed', async () => {
    const { batch } = clients(cluster);
    await batch.createNamespacedJob({ namespace: ns, body: job('fails', 'echo failing >&2; exit 1', 1) });
    const failed = await waitFor(
      'Job failed',
      async () => {
        const j = await batch.readNamespacedJob({ name: 'fails', namespace: ns });
        return j.status?.conditions?.some((c) => c.type === 'Failed' && c.status === 'True') ? j : undefined;
      },
      { timeoutMs: 90_000 },
    );
    const condition = failed.status?.conditions?.find((c) => c.type === 'Failed');
    expect(condition?.reason).toBe('BackoffLimitExceeded');
    expect(failed.status?.failed).toBe(2); // the first try and one retry
    const pods = await jobPods('fails');
    for (const pod of pods.filter((p) => !p.metadata?.deletionTimestamp)) {
      expect(pod.status?.phase).toBe('Failed');
      expect(pod.status?.containerStatuses?.[0]?.state?.terminated?.exitCode).toBe(1);
    }
  });

  it('restartPolicy OnFailure restarts a failing container until it succeeds', async () => {
    const { core } = clients(cluster);
    // Counts its runs in $HOME (the Pod's directory, kept across restarts) and succeeds on the third.
    const script =
      'n=$(cat "$HOME/runs" 2>/dev/null || echo 0); n=$((n+1)); echo $n > "$HOME/runs"; echo run $n; [ $n -ge 3 ]';
    await core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name: 'retry' },
        spec: {
          restartPolicy: 'OnFailure',
          containers: [{ name: 'main', image: 'busybox', command: ['sh', '-c', script] }],
        },
      },
    });
    const pod = await waitFor('pod Succeeded', async () => {
      const p = await core.readNamespacedPod({ name: 'retry', namespace: ns });
      return p.status?.phase === 'Succeeded' ? p : undefined;
    });
    expect(pod.status?.containerStatuses?.[0]?.restartCount).toBe(2);
    expect(pod.status?.containerStatuses?.[0]?.lastState?.terminated?.exitCode).toBe(1);
    expect(await cluster.logs(ns, 'retry', 'main')).toContain('run 3');
  });

  it('restartPolicy Never leaves a failed Pod Failed', async () => {
    const { core } = clients(cluster);
    await core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name: 'once' },
        spec: {
          restartPolicy: 'Never',
          containers: [{ name: 'main', image: 'busybox', command: ['false'] }],
        },
      },
    });
    const pod = await waitFor('pod Failed', async () => {
      const p = await core.readNamespacedPod({ name: 'once', namespace: ns });
      return p.status?.phase === 'Failed' ? p : undefined;
    });
    expect(pod.status?.containerStatuses?.[0]?.restartCount).toBe(0);
  });
  it("runs init containers first, then the containers, sharing the Pod's directory", async () => {
    const { core } = clients(cluster);
    await core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name: 'with-init' },
        spec: {
          restartPolicy: 'Never',
          initContainers: [
            { name: 'prepare', image: 'busybox', command: ['sh', '-c', 'echo prepared > "$HOME/state"'] },
          ],
          containers: [{ name: 'main', image: 'busybox', command: ['sh', '-c', 'cat "$HOME/state"'] }],
        },
      },
    });
    const pod = await waitFor('pod Succeeded', async () => {
      const p = await core.readNamespacedPod({ name: 'with-init', namespace: ns });
      return p.status?.phase === 'Succeeded' ? p : undefined;
    });
    expect(pod.status?.initContainerStatuses?.[0]?.state?.terminated?.exitCode).toBe(0);
    expect(pod.status?.conditions?.find((c) => c.type === 'Initialized')?.status).toBe('True');
    expect(await cluster.logs(ns, 'with-init', 'main')).toBe('prepared\n');
  });

  it("the project's image runs the observatory CLI, with command/args as its arguments", async () => {
    const { core } = clients(cluster);
    await core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name: 'cli' },
        spec: {
          restartPolicy: 'Never',
          containers: [{ name: 'observatory', image: 'ghcr.io/example/observatory:0.1.0', args: ['--help'] }],
        },
      },
    });
    const pod = await waitFor('pod finished', async () => {
      const p = await core.readNamespacedPod({ name: 'cli', namespace: ns });
      return p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed' ? p : undefined;
    });
    expect(pod.status?.phase).toBe('Succeeded');
    expect(await cluster.logs(ns, 'cli', 'observatory')).toContain('usage: observatory <command>');
  });
});
