// Builds helm and kubeconform and generates the Kubernetes schemas once before the chart tests (a
// fresh machine has none cached), so no test's timeout has to cover a cold Go build.
import { ensureHelm, ensureKubeconform, helm, kubeconform, toolRecord } from '../tools/go-tools.ts';
import { ensureKubernetesSchemas } from '../tools/kubernetes-schemas.ts';

export default async function setup(): Promise<void> {
  const log = (line: string) => console.log(`[chart] ${line}`);
  await Promise.all([ensureHelm(log), ensureKubeconform(log), ensureKubernetesSchemas(log)]);
  for (const tool of [helm, kubeconform]) {
    const record = await toolRecord(tool);
    if (record)
      log(`${tool.name} ${record.version} (cold build ${record.seconds}s with ${record.goVersion})`);
  }
}
