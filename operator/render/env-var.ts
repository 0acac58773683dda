/** Container variables: a literal value, or a key of a Secret (never its value). */
import type { V1EnvVar } from '@kubernetes/client-node';
import type { SecretKeyRef } from '../api/v1alpha1.ts';

export const value = (name: string, v: string | number | boolean): V1EnvVar => ({ name, value: String(v) });
export const secret = (name: string, ref: SecretKeyRef): V1EnvVar => ({
  name,
  valueFrom: { secretKeyRef: { name: ref.name, key: ref.key } },
});
