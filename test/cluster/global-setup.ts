// The cluster suite's one local cluster (control plane and the real node): built when missing
// (each build a step with its time) and started once before any file runs, so no test's timeout
// covers a cold build; stopped after the last file, and the machine is then checked for anything
// the node left behind. Files attach with `localCluster()` (test/cluster/shared.ts).
import type { TestProject } from 'vitest/node';
import { type LocalClusterInfo, startLocalCluster } from '../../cluster/local-cluster.ts';
import { nodeLeftovers } from '../../cluster/node/teardown.ts';
import { ensureGitopsHealth } from '../tools/gitops-health.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    localCluster: LocalClusterInfo;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const log = (line: string) => console.log(`[cluster] ${line}`);
  // The e2e walks judge every status with kstatus and the Argo CD check: built before any test runs.
  await ensureGitopsHealth(log);
  const cluster = await startLocalCluster({ log });
  project.provide('localCluster', cluster.info);
  return async () => {
    await cluster.stop();
    const left = await nodeLeftovers(cluster.dataDir);
    if (left.length) throw new Error(`the local node left behind: ${left.join('; ')}`);
  };
}
