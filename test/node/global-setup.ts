// Builds everything the local cluster runs (control plane, kubelet, containerd, CoreDNS, the base
// image and the project's image) before the node tests, each shown as a step with its time, so no
// test's timeout has to cover a cold build.
import { buildAll } from '../../cluster/local-cluster.ts';
import { stepReporter } from '../../cluster/steps.ts';

export default async function setup(): Promise<void> {
  await buildAll(stepReporter((line) => console.log(`[node] ${line}`)));
}
