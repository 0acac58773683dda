/**
 * Applies a role's Pod template (spec.<role>.template) to the Pod spec the operator renders:
 * scheduling and identity fields are copied, security contexts start from the restricted Pod
 * Security Standard (each field the user sets replaces the default), /tmp is a writable emptyDir
 * under the read-only root filesystem, and extra env comes after the operator's own variables.
 */
import type {
  V1Container,
  V1EnvFromSource,
  V1EnvVar,
  V1PodSecurityContext,
  V1PodSpec,
  V1SecurityContext,
  V1Toleration,
  V1TopologySpreadConstraint,
  V1Volume,
} from '@kubernetes/client-node';
import type { PodTemplate } from '../api/template.ts';

/** The image's user (Dockerfile `USER 10001:10001`). */
export const IMAGE_UID = 10001;

export const RESTRICTED_POD_SECURITY: V1PodSecurityContext = {
  runAsNonRoot: true,
  runAsUser: IMAGE_UID,
  runAsGroup: IMAGE_UID,
  fsGroup: IMAGE_UID,
  seccompProfile: { type: 'RuntimeDefault' },
};

export const RESTRICTED_CONTAINER_SECURITY: V1SecurityContext = {
  runAsNonRoot: true,
  allowPrivilegeEscalation: false,
  readOnlyRootFilesystem: true,
  capabilities: { drop: ['ALL'] },
};

/** The writable scratch space the service needs (HOME=/tmp in the image). */
const TMP_VOLUME: V1Volume = { name: 'tmp', emptyDir: { sizeLimit: '1Gi' } };
const TMP_MOUNT = { name: 'tmp', mountPath: '/tmp' };

export interface PodParts {
  labels: Record<string, string>;
  annotations: Record<string, string>;
  spec: V1PodSpec;
}

/**
 * The Pod of one role: `container` carries the operator's own settings (image, args, env, probes);
 * `labels` and `annotations` are the operator's, which win over the template's.
 */
export function applyTemplate(
  template: PodTemplate | undefined,
  container: V1Container,
  own: {
    labels: Record<string, string>;
    annotations: Record<string, string>;
    selector: Record<string, string>;
  },
  podSpec: Omit<V1PodSpec, 'containers'> = {},
): PodParts {
  const t = template ?? {};
  const c: V1Container = {
    ...container,
    env: [...(container.env ?? []), ...((t.env ?? []) as V1EnvVar[])],
    ...(t.envFrom?.length ? { envFrom: t.envFrom as V1EnvFromSource[] } : {}),
    volumeMounts: [TMP_MOUNT, ...(t.volumeMounts ?? [])],
    securityContext: { ...RESTRICTED_CONTAINER_SECURITY, ...(t.containerSecurityContext ?? {}) },
  };
  const spec: V1PodSpec = {
    ...podSpec,
    containers: [c],
    securityContext: { ...RESTRICTED_POD_SECURITY, ...(t.podSecurityContext ?? {}) },
    volumes: [TMP_VOLUME, ...(t.volumes ?? [])],
    ...(t.nodeSelector ? { nodeSelector: t.nodeSelector } : {}),
    ...(t.tolerations ? { tolerations: t.tolerations as V1Toleration[] } : {}),
    ...(t.affinity ? { affinity: t.affinity } : {}),
    ...(t.topologySpreadConstraints
      ? {
          topologySpreadConstraints: t.topologySpreadConstraints.map(
            (s): V1TopologySpreadConstraint => ({ labelSelector: { matchLabels: own.selector }, ...s }),
          ),
        }
      : {}),
    ...(t.priorityClassName ? { priorityClassName: t.priorityClassName } : {}),
    ...(t.serviceAccountName ? { serviceAccountName: t.serviceAccountName } : {}),
    ...(t.imagePullSecrets ? { imagePullSecrets: t.imagePullSecrets } : {}),
  };
  return {
    labels: { ...(t.metadata?.labels ?? {}), ...own.labels },
    annotations: { ...(t.metadata?.annotations ?? {}), ...own.annotations },
    spec,
  };
}
