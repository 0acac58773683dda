// Builds helm, kubeconform, the GitOps health checkers and Prometheus's rule and PromQL checker,
// fetches the Prometheus Operator's CRDs, generates the Kubernetes schemas and builds the local cluster's
// control plane (install.test.ts) once before the chart tests (a fresh machine has none cached), so
// no test's timeout has to cover a cold Go build.
import { ensureControlPlane } from '../../cluster/control-plane-binary.ts';
import { ensureGitopsHealth } from '../tools/gitops-health.ts';
import { ensureHelm, ensureKubeconform, helm, kubeconform, toolRecord } from '../tools/go-tools.ts';
import { ensureKubernetesSchemas } from '../tools/kubernetes-schemas.ts';
import { ensurePrometheusOperatorCrds } from '../tools/prometheus-operator-crds.ts';
import { ensurePromqlParser } from '../tools/promql.ts';

export default async function setup(): Promise<void> {
  const log = (line: string) => console.log(`[chart] ${line}`);
  await Promise.all([
    ensureHelm(log),
    ensureKubeconform(log),
    ensureKubernetesSchemas(log),
    ensureGitopsHealth(log),
    ensurePromqlParser(log),
    ensurePrometheusOperatorCrds(log),
  ]);
  // After the tools: the control plane's cold build is the long one (minutes); it is usually cached.
  await ensureControlPlane(log);
  for (const tool of [helm, kubeconform]) {
    const record = await toolRecord(tool);
    if (record)
      log(`${tool.name} ${record.version} (cold build ${record.seconds}s with ${record.goVersion})`);
  }
}
