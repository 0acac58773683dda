// Credentials a Pod's processes use to reach the API server as the Pod's service account, the way
// the kubelet provides them: a token from the TokenRequest API bound to the Pod, requested only
// when the Pod mounts one (automountServiceAccountToken), written with the CA and namespace into
// the Pod's directory, plus a kubeconfig holding that token for KUBECONFIG.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { CoreV1Api, V1Pod, V1ServiceAccountTokenProjection } from '@kubernetes/client-node';
import { writeKubeconfig } from '../../../cluster/kubeconfig.ts';

export interface ApiEndpoint {
  host: string;
  port: number;
  caFile: string;
}

/** The projected token the ServiceAccount admission plugin adds for automounted credentials. */
function apiTokenProjection(pod: V1Pod): V1ServiceAccountTokenProjection | undefined {
  for (const volume of pod.spec?.volumes ?? []) {
    for (const source of volume.projected?.sources ?? []) {
      if (source.serviceAccountToken && !source.serviceAccountToken.audience)
        return source.serviceAccountToken;
    }
  }
  return undefined;
}

/** Writes the Pod's credentials; returns the kubeconfig path, or undefined when the Pod mounts none. */
export async function writePodCredentials(
  core: CoreV1Api,
  pod: V1Pod,
  podDir: string,
  api: ApiEndpoint,
): Promise<string | undefined> {
  const projection = apiTokenProjection(pod);
  if (!projection) return undefined;
  const name = pod.metadata?.name ?? '';
  const namespace = pod.metadata?.namespace ?? 'default';
  const serviceAccount = pod.spec?.serviceAccountName ?? 'default';
  const response = await core.createNamespacedServiceAccountToken({
    name: serviceAccount,
    namespace,
    body: {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenRequest',
      spec: {
        audiences: [],
        // 3607s as the kubelet asks: the API server extends such tokens (service-account-extend-token-expiration).
        expirationSeconds: projection.expirationSeconds ?? 3607,
        boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name, uid: pod.metadata?.uid },
      },
    },
  });
  const token = response.status?.token;
  if (!token) throw new Error(`TokenRequest for ${namespace}/${serviceAccount} returned no token`);
  const secretsDir = join(podDir, 'serviceaccount');
  await mkdir(secretsDir, { recursive: true });
  await writeFile(join(secretsDir, 'token'), token, { mode: 0o600 });
  await writeFile(join(secretsDir, 'namespace'), namespace);
  await writeFile(join(secretsDir, 'ca.crt'), await readFile(api.caFile));
  const kubeconfig = join(podDir, 'kubeconfig');
  await writeKubeconfig(kubeconfig, {
    server: `https://${api.host}:${api.port}`,
    caFile: join(secretsDir, 'ca.crt'),
    user: { token },
    namespace,
  });
  return kubeconfig;
}
