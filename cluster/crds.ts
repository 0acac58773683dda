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
import { rawRequest } from './raw-request.ts';
import { waitFor } from './wait.ts';

export const harnessFieldManager = 'observatory-cluster-harness';

async function yamlFiles(dir: string): Promise<string[]> {
  const names = await readdir(dir).catch(() => [] as string[]);
  return names
    .filter((n) => /\.ya?ml$/.test(n))
    .sort()
    .map((n) => join(dir, n));
}

/** Server-side apply of a CRD exactly as written (see raw-request.ts for why not the typed client). */
async function applyCrd(kc: KubeConfig, crd: KubernetesObject, file: string): Promise<void> {
  const path = `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata?.name}?fieldManager=${harnessFieldManager}&force=true`;
  const response = await rawRequest(kc, 'PATCH', path, crd, PatchStrategy.ServerSideApply);
  if (response.status >= 300) {
    let message = response.body;
    try {
      message = (JSON.parse(response.body) as { message?: string }).message ?? message;
    } catch {}
    throw new Error(
      `the API server rejected CRD ${crd.metadata?.name} from ${file} (${response.status}): ${message}`,
    );
  }
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
        if (object.kind === 'CustomResourceDefinition' && object.metadata?.name) {
          await applyCrd(kc, object, file);
          applied.push(object.metadata.name);
        } else {
          await objects.patch(
            object,
            undefined,
            undefined,
            harnessFieldManager,
            true,
            PatchStrategy.ServerSideApply,
          );
        }
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
