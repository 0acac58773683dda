// Applies CustomResourceDefinitions from YAML files and waits until the API serves them.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  ApiextensionsV1Api,
  type KubeConfig,
  type KubernetesObject,
  KubernetesObjectApi,
  PatchStrategy,
  type V1CustomResourceDefinition,
} from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { waitFor } from './wait.ts';

export const harnessFieldManager = 'observatory-cluster-harness';

async function yamlFiles(dir: string): Promise<string[]> {
  const names = await readdir(dir).catch(() => [] as string[]);
  return names
    .filter((n) => /\.ya?ml$/.test(n))
    .sort()
    .map((n) => join(dir, n));
}

/** Server-side applies every object in the YAML files of dirs; returns the CRD names applied. */
export async function applyCrdDirs(kc: KubeConfig, dirs: string[]): Promise<string[]> {
  const objects = kc.makeApiClient(KubernetesObjectApi);
  const applied: string[] = [];
  for (const dir of dirs) {
    for (const file of await yamlFiles(dir)) {
      for (const doc of parseAllDocuments(await readFile(file, 'utf8'))) {
        const object = doc.toJS() as KubernetesObject | null;
        if (!object?.kind) continue;
        await objects.patch(
          object,
          undefined,
          undefined,
          harnessFieldManager,
          true,
          PatchStrategy.ServerSideApply,
        );
        if (object.kind === 'CustomResourceDefinition' && object.metadata?.name)
          applied.push(object.metadata.name);
      }
    }
  }
  await waitEstablished(kc, applied);
  return applied;
}

export async function waitEstablished(kc: KubeConfig, names: string[], timeoutMs = 30_000): Promise<void> {
  const api = kc.makeApiClient(ApiextensionsV1Api);
  for (const name of names) {
    await waitFor(
      `CRD ${name} Established`,
      async () => {
        const crd: V1CustomResourceDefinition = await api.readCustomResourceDefinition({ name });
        return crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True');
      },
      { timeoutMs, intervalMs: 100 },
    );
  }
}
