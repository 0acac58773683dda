// The cluster DNS as in any cluster: CoreDNS Pods behind the `kube-dns` Service at the address the
// kubelet gives Pods as their nameserver. CoreDNS listens on an unprivileged port (it runs as a
// non-root user with no capabilities); the Service maps 53 to it.
import { stringify } from 'yaml';
import type { NodeNetwork } from './addresses.ts';
import { corefile } from './configs.ts';

const port = 1053;
const labels = { 'k8s-app': 'kube-dns' };
const namespace = 'kube-system';

/** The Service and what CoreDNS needs to start, in apply order (the Service before any Pod). */
export function dnsManifests(network: NodeNetwork, image: string): string {
  const objects = [
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'kube-dns', namespace, labels },
      spec: {
        clusterIP: network.dnsIP,
        selector: labels,
        ports: [
          { name: 'dns', port: 53, targetPort: port, protocol: 'UDP' },
          { name: 'dns-tcp', port: 53, targetPort: port, protocol: 'TCP' },
        ],
      },
    },
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'coredns', namespace } },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'system:coredns' },
      rules: [
        { apiGroups: [''], resources: ['services', 'pods', 'namespaces'], verbs: ['list', 'watch'] },
        { apiGroups: ['discovery.k8s.io'], resources: ['endpointslices'], verbs: ['list', 'watch'] },
      ],
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'system:coredns' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'system:coredns' },
      subjects: [{ kind: 'ServiceAccount', name: 'coredns', namespace }],
    },
    {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'coredns', namespace },
      data: { Corefile: corefile(network, port) },
    },
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'coredns', namespace, labels },
      spec: {
        replicas: 1,
        selector: { matchLabels: labels },
        template: {
          metadata: { labels },
          spec: {
            serviceAccountName: 'coredns',
            priorityClassName: 'system-cluster-critical',
            // CoreDNS itself must not ask itself: it only talks to the API server.
            dnsPolicy: 'Default',
            terminationGracePeriodSeconds: 1,
            containers: [
              {
                name: 'coredns',
                image,
                imagePullPolicy: 'Never',
                args: ['-conf', '/etc/coredns/Corefile'],
                ports: [
                  { name: 'dns', containerPort: port, protocol: 'UDP' },
                  { name: 'dns-tcp', containerPort: port, protocol: 'TCP' },
                ],
                readinessProbe: { httpGet: { path: '/ready', port: 8181 }, periodSeconds: 2 },
                livenessProbe: { httpGet: { path: '/health', port: 8080 }, periodSeconds: 10 },
                securityContext: {
                  runAsNonRoot: true,
                  readOnlyRootFilesystem: true,
                  allowPrivilegeEscalation: false,
                  capabilities: { drop: ['ALL'] },
                },
                volumeMounts: [{ name: 'config', mountPath: '/etc/coredns', readOnly: true }],
              },
            ],
            volumes: [{ name: 'config', configMap: { name: 'coredns' } }],
          },
        },
      },
    },
  ];
  return objects.map((o) => stringify(o)).join('---\n');
}
