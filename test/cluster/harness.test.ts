// The harness itself: clusters side by side, and nothing left behind after stop() or after the
// process that started a cluster is killed outright.
import { spawn } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, describe, expect, it } from 'vitest';
import { groupAlive } from '../../cluster/processes.ts';
import { waitFor } from '../../cluster/wait.ts';
import { type Cluster, leftovers, startCluster } from './harness.ts';
import { portIsFree } from './network.ts';
import { clients, processAlive, startSleeperPod } from './testing.ts';

// These tests are about the cluster, not about the project's CRDs (which other suites apply).
const noCrds = { crdDirs: [] };

describe('the cluster harness', () => {
  const started: Cluster[] = [];
  afterAll(async () => {
    await Promise.all(started.map((c) => c.stop()));
  });

  it('runs two clusters side by side and leaves no process or port behind after stop()', async () => {
    const [a, b] = await Promise.all([startCluster(noCrds), startCluster(noCrds)]);
    started.push(a, b);
    expect(a.host).not.toBe(b.host);
    for (const cluster of [a, b]) {
      const nodes = await clients(cluster).core.listNode();
      expect(nodes.items.map((n) => n.metadata?.name)).toEqual(['local-node']);
    }
    // A running Pod is part of what stop() must end.
    await startSleeperPod(a);
    const pidsA = a.pids();
    const pidsB = b.pids();
    expect(pidsA.length).toBe(5); // etcd, apiserver, controller manager, scheduler, the Pod
    expect(pidsB.length).toBe(4);
    await Promise.all([a.stop(), b.stop()]);
    expect(await leftovers(a, pidsA)).toEqual([]);
    expect(await leftovers(b, pidsB)).toEqual([]);
  });

  it('leaves nothing behind when the process running the harness is killed', async () => {
    const child = spawn(process.execPath, [join(import.meta.dirname, 'fixtures', 'hold-cluster.ts')], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const line = await new Promise<string>((resolve, reject) => {
      createInterface({ input: child.stdout }).once('line', resolve);
      child.once('exit', (code) => reject(new Error(`fixture exited with ${code}`)));
    });
    const held = JSON.parse(line) as {
      pids: number[];
      host: string;
      ports: Record<string, number>;
      dataDir: string;
    };
    expect(held.pids.length).toBe(5);
    child.kill('SIGKILL');
    await waitFor(
      'every process gone',
      () => held.pids.every((pid) => !groupAlive(pid) && !processAlive(pid)),
      {
        timeoutMs: 15_000,
      },
    );
    for (const port of Object.values(held.ports)) expect(await portIsFree(held.host, port)).toBe(true);
    await rm(held.dataDir, { recursive: true, force: true });
  });
});
