/**
 * A CR and a values.yaml that use every Pod-template field, the objects they name (PriorityClass,
 * ServiceAccount, pull Secret, ConfigMap), and the check that a live Pod carries each setting.
 * Every setting stays within the restricted Pod Security Standard the e2e namespaces enforce.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { expect } from 'vitest';
import { stringify } from 'yaml';

export const PRIORITY_CLASS = 'observatory-e2e';
const PRIORITY = 1000;
const SERVICE_ACCOUNT = 'observatory-e2e';
const PULL_SECRET = 'registry-e2e';
const CONFIG_MAP = 'e2e-extra';
const TOLERATION = {
  key: 'e2e.observatory.dev/dedicated',
  operator: 'Equal',
  value: 'observatory',
  effect: 'NoSchedule',
};
const NODE_SELECTOR = { 'kubernetes.io/os': 'linux' };
const SUPPLEMENTAL_GROUP = 3000;

/** The objects the templates name: the PriorityClass is cluster-wide, the rest in `ns`. */
export function supportObjects(ns: string, operatorNs: string): string {
  const pullSecret = (namespace: string) => ({
    apiVersion: 'v1',
    kind: 'Secret',
    type: 'kubernetes.io/dockerconfigjson',
    metadata: { name: PULL_SECRET, namespace },
    // Never used: the image is on the node and nothing may be pulled.
    stringData: { '.dockerconfigjson': '{"auths":{"registry.invalid":{"auth":"dTpw"}}}' },
  });
  return [
    {
      apiVersion: 'scheduling.k8s.io/v1',
      kind: 'PriorityClass',
      metadata: { name: PRIORITY_CLASS },
      value: PRIORITY,
      description: 'The e2e walk: Pods of the templates',
    },
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: SERVICE_ACCOUNT, namespace: ns } },
    pullSecret(ns),
    pullSecret(operatorNs),
    {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: CONFIG_MAP, namespace: ns },
      data: { E2E_FROM_CONFIGMAP: 'from-configmap', 'note.txt': 'mounted' },
    },
  ]
    .map((o) => stringify(o))
    .join('---\n');
}

/** spec.<role>.template with every field set; `role` is also the value of its marks. */
export function everyTemplateField(role: string) {
  const own = { 'e2e.observatory.dev/role': role };
  return {
    metadata: {
      labels: { 'e2e.observatory.dev/role': role },
      annotations: { 'e2e.observatory.dev/note': `template of ${role}` },
    },
    nodeSelector: NODE_SELECTOR,
    tolerations: [TOLERATION],
    affinity: {
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: [
            { matchExpressions: [{ key: 'kubernetes.io/os', operator: 'In', values: ['linux'] }] },
          ],
        },
      },
      podAntiAffinity: {
        preferredDuringSchedulingIgnoredDuringExecution: [
          {
            weight: 10,
            podAffinityTerm: { topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: own } },
          },
        ],
      },
    },
    topologySpreadConstraints: [
      { maxSkew: 1, topologyKey: 'kubernetes.io/hostname', whenUnsatisfiable: 'ScheduleAnyway' },
    ],
    priorityClassName: PRIORITY_CLASS,
    serviceAccountName: SERVICE_ACCOUNT,
    imagePullSecrets: [{ name: PULL_SECRET }],
    podSecurityContext: {
      supplementalGroups: [SUPPLEMENTAL_GROUP],
      seccompProfile: { type: 'RuntimeDefault' },
    },
    containerSecurityContext: {
      runAsNonRoot: true,
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
      seccompProfile: { type: 'RuntimeDefault' },
    },
    env: [
      { name: 'E2E_ROLE', value: role },
      { name: 'E2E_NOTE', valueFrom: { configMapKeyRef: { name: CONFIG_MAP, key: 'note.txt' } } },
    ],
    envFrom: [{ configMapRef: { name: CONFIG_MAP } }],
    volumes: [
      { name: 'extra', configMap: { name: CONFIG_MAP, items: [{ key: 'note.txt', path: 'note.txt' }] } },
    ],
    volumeMounts: [{ name: 'extra', mountPath: '/etc/e2e', readOnly: true }],
  };
}

const operatorTemplate = everyTemplateField('operator');

/** values.yaml of the chart with every Pod field it offers for the operator. */
export const OPERATOR_VALUES = {
  podLabels: operatorTemplate.metadata.labels,
  podAnnotations: operatorTemplate.metadata.annotations,
  nodeSelector: NODE_SELECTOR,
  tolerations: [TOLERATION],
  affinity: operatorTemplate.affinity,
  topologySpreadConstraints: [
    {
      ...operatorTemplate.topologySpreadConstraints[0]!,
      labelSelector: {
        matchLabels: { 'app.kubernetes.io/name': 'observatory', 'app.kubernetes.io/component': 'operator' },
      },
    },
  ],
  priorityClassName: PRIORITY_CLASS,
  imagePullSecrets: [{ name: PULL_SECRET }],
  podSecurityContext: {
    runAsNonRoot: true,
    runAsUser: 10001,
    runAsGroup: 10001,
    fsGroup: 10001,
    supplementalGroups: [SUPPLEMENTAL_GROUP],
    seccompProfile: { type: 'RuntimeDefault' },
  },
};

/** The live Pod carries each setting of everyTemplateField(role), admission's results included. */
export function expectTemplateOn(pod: V1Pod, role: string): void {
  const t = everyTemplateField(role);
  const where = `${role} Pod ${pod.metadata?.name}`;
  const spec = pod.spec!;
  const c = spec.containers[0]!;
  expect(pod.metadata?.labels, where).toMatchObject(t.metadata.labels);
  expect(pod.metadata?.annotations, where).toMatchObject(t.metadata.annotations);
  expect(spec.nodeSelector, where).toEqual(t.nodeSelector);
  // The API server adds its own NoExecute tolerations (DefaultTolerationSeconds).
  expect(spec.tolerations, where).toContainEqual(TOLERATION);
  expect(spec.affinity, where).toEqual(t.affinity);
  expect(spec.topologySpreadConstraints, where).toHaveLength(1);
  expect(spec.topologySpreadConstraints![0], where).toMatchObject(t.topologySpreadConstraints[0]!);
  expect(spec.priorityClassName, where).toBe(PRIORITY_CLASS);
  // Resolved by the Priority admission plugin from the PriorityClass.
  expect(spec.priority, where).toBe(PRIORITY);
  expect(spec.serviceAccountName, where).toBe(SERVICE_ACCOUNT);
  expect(spec.imagePullSecrets, where).toEqual(t.imagePullSecrets);
  expect(spec.securityContext, where).toMatchObject({
    runAsNonRoot: true,
    supplementalGroups: [SUPPLEMENTAL_GROUP],
    seccompProfile: { type: 'RuntimeDefault' },
  });
  expect(c.securityContext, where).toMatchObject(t.containerSecurityContext);
  expect(c.env, where).toEqual(expect.arrayContaining(t.env));
  expect(c.envFrom, where).toEqual(t.envFrom);
  expect(spec.volumes, where).toContainEqual(
    expect.objectContaining({ name: 'extra', configMap: expect.objectContaining({ name: CONFIG_MAP }) }),
  );
  expect(c.volumeMounts, where).toContainEqual(t.volumeMounts[0]);
}

/** The chart's operator Pod carries each value of OPERATOR_VALUES. */
export function expectOperatorValuesOn(pod: V1Pod): void {
  const spec = pod.spec!;
  const where = `operator Pod ${pod.metadata?.name}`;
  expect(pod.metadata?.labels, where).toMatchObject(OPERATOR_VALUES.podLabels);
  expect(pod.metadata?.annotations, where).toMatchObject(OPERATOR_VALUES.podAnnotations);
  expect(spec.nodeSelector, where).toEqual(NODE_SELECTOR);
  expect(spec.tolerations, where).toContainEqual(TOLERATION);
  expect(spec.affinity, where).toEqual(OPERATOR_VALUES.affinity);
  expect(spec.topologySpreadConstraints, where).toEqual(OPERATOR_VALUES.topologySpreadConstraints);
  expect(spec.priorityClassName, where).toBe(PRIORITY_CLASS);
  expect(spec.priority, where).toBe(PRIORITY);
  expect(spec.imagePullSecrets, where).toEqual(OPERATOR_VALUES.imagePullSecrets);
  expect(spec.securityContext, where).toMatchObject(OPERATOR_VALUES.podSecurityContext);
}
