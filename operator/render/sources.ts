/**
 * What each role reads from Secrets and ConfigMaps, and a hash of that content for the Pod
 * template (`observatory.dev/inputs-hash`): env resolved from a Secret is fixed when the container
 * starts, so a rotated datastore password or bucket key reaches the Pods only if they roll. The runtime hands
 * the planner per-key digests of the objects it watches (never the values); a source it cannot
 * see (not labeled for watching, or missing) hashes as unseen, so labeling it later rolls once.
 */
import type { V1EnvVarSource } from '@kubernetes/client-node';
import type { ObservabilityServiceSpec } from '../api/v1alpha1.ts';
import { shortHash } from '../util/hash.ts';
import { blobSecretRefs } from './blob-storage.ts';
import type { SourceReader } from './names.ts';

/** Per-key SHA-256 digests of the watched Secrets and ConfigMaps of the namespace, by name. */
export interface SourceDigests {
  secrets: Record<string, Record<string, string>>;
  configMaps: Record<string, Record<string, string>>;
}

/** One thing a role reads: one key of a Secret or ConfigMap, or every key (envFrom). */
export interface SourceRef {
  kind: 'Secret' | 'ConfigMap';
  name: string;
  /** Absent: every key (envFrom). */
  key?: string;
}

/** The Secret and ConfigMap keys a role's container reads through its environment. */
export function sourcesRead(spec: ObservabilityServiceSpec, role: SourceReader): SourceRef[] {
  const ds = spec.datastores;
  const refs: SourceRef[] = [
    ds.postgres.urlSecretRef,
    ds.clickhouse.urlSecretRef,
    ds.redis.urlSecretRef,
    ...(ds.clickhouse.userSecretRef ? [ds.clickhouse.userSecretRef] : []),
    ...(ds.clickhouse.passwordSecretRef ? [ds.clickhouse.passwordSecretRef] : []),
    ...blobSecretRefs(spec, role),
  ].map((r) => ({ kind: 'Secret', name: r.name, key: r.key }));
  const template = spec[role]?.template;
  for (const e of template?.env ?? []) {
    const from = e.valueFrom as V1EnvVarSource | undefined;
    if (from?.secretKeyRef?.name)
      refs.push({ kind: 'Secret', name: from.secretKeyRef.name, key: from.secretKeyRef.key });
    if (from?.configMapKeyRef?.name)
      refs.push({ kind: 'ConfigMap', name: from.configMapKeyRef.name, key: from.configMapKeyRef.key });
  }
  for (const f of template?.envFrom ?? []) {
    if (f.secretRef) refs.push({ kind: 'Secret', name: f.secretRef.name });
    if (f.configMapRef) refs.push({ kind: 'ConfigMap', name: f.configMapRef.name });
  }
  return refs;
}

const UNSEEN = 'unseen';

function digestOf(ref: SourceRef, digests: SourceDigests | undefined): string | Record<string, string> {
  const keys = (ref.kind === 'Secret' ? digests?.secrets : digests?.configMaps)?.[ref.name];
  if (!keys) return UNSEEN;
  if (ref.key === undefined) return keys;
  return keys[ref.key] ?? UNSEEN;
}

/**
 * Hash of the content a role reads: changes exactly when one of the referenced keys (or, for an
 * envFrom source, any key) changes, appears or disappears; other keys of the same Secret do not count.
 */
export function sourcesHash(refs: readonly SourceRef[], digests: SourceDigests | undefined): string {
  const entries = refs
    .map((r) => [r.kind, r.name, r.key ?? '*', digestOf(r, digests)] as const)
    .sort((a, b) => (`${a[0]}/${a[1]}/${a[2]}` < `${b[0]}/${b[1]}/${b[2]}` ? -1 : 1));
  return shortHash(entries, 16);
}
