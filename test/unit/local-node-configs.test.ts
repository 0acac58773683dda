// The node's configuration files as pure functions of its layout: the settings this machine needs
// (see cluster/node/configs.ts) and the network rules (no masquerading, no upstream DNS).
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { nodeNetwork } from '../../cluster/node/addresses.ts';
import {
  cniConfig,
  containerdConfig,
  corefile,
  kubeletConfig,
  kubeProxyConfig,
  type NodeLayout,
} from '../../cluster/node/configs.ts';
import { dnsManifests } from '../../cluster/node/dns.ts';

const layout: NodeLayout = {
  nodeName: 'n1',
  network: nodeNetwork,
  dataDir: '/tmp/node',
  containerdRoot: '/cache/containerd',
  containerdSocket: '/tmp/node/containerd.sock',
  registryConfigDir: '/tmp/node/registries',
  cniConfDir: '/tmp/node/cni',
  cniBinDir: '/usr/lib/cni',
  runc: '/usr/sbin/runc',
  sandboxImage: 'registry.k8s.io/pause:local',
  caCert: '/tmp/node/ca.crt',
  kubeProxyKubeconfig: '/tmp/node/kube-proxy.kubeconfig',
  resolvConf: '/tmp/node/resolv.conf',
};

describe('kubelet configuration', () => {
  const config = parse(kubeletConfig(layout));
  it.each([
    ['cgroupDriver', 'cgroupfs'],
    ['failCgroupV1', false],
    ['failSwapOn', false],
    ['containerRuntimeEndpoint', 'unix:///tmp/node/containerd.sock'],
    ['address', nodeNetwork.nodeIP],
    ['clusterDNS', [nodeNetwork.dnsIP]],
    ['clusterDomain', 'cluster.local'],
    ['resolvConf', '/tmp/node/resolv.conf'],
    ['imageGCHighThresholdPercent', 100],
    ['readOnlyPort', 0],
  ])('%s is %j', (field, value) => {
    expect(config[field]).toEqual(value);
  });
  it('accepts only certificate and token-reviewed clients', () => {
    expect(config.authentication).toEqual({
      anonymous: { enabled: false },
      webhook: { enabled: true },
      x509: { clientCAFile: '/tmp/node/ca.crt' },
    });
    expect(config.authorization).toEqual({ mode: 'Webhook' });
  });
});

describe('kube-proxy configuration', () => {
  const config = parse(kubeProxyConfig(layout));
  it.each([
    ['mode', 'iptables'],
    ['clusterCIDR', nodeNetwork.clusterCIDR],
    ['nodePortAddresses', [`${nodeNetwork.nodeIP}/32`]],
    ['conntrack', { maxPerCore: 0, min: 0, tcpEstablishedTimeout: '0s', tcpCloseWaitTimeout: '0s' }],
  ])('%s is %j', (field, value) => {
    expect(config[field]).toEqual(value);
  });
});

describe('containerd configuration', () => {
  const toml = containerdConfig(layout);
  it.each([
    ['restrict_oom_score_adj = true'],
    ['SystemdCgroup = false'],
    ['sandbox = "registry.k8s.io/pause:local"'],
    ['config_path = "/tmp/node/registries"'],
    ["snapshotter = 'overlayfs'"],
    ['address = "/tmp/node/containerd.sock"'],
    ['BinaryName = "/usr/sbin/runc"'],
  ])('holds %s', (line) => {
    expect(toml.split('\n').map((l) => l.trim())).toContain(line);
  });
});

describe('network', () => {
  it('the CNI bridge never masquerades and hands out the Pod range', () => {
    const conf = JSON.parse(cniConfig(layout));
    expect(conf.plugins).toHaveLength(1);
    expect(conf.plugins[0]).toMatchObject({
      type: 'bridge',
      bridge: nodeNetwork.podBridge,
      ipMasq: false,
      ipam: {
        type: 'host-local',
        ranges: [[{ subnet: nodeNetwork.podCIDR, gateway: nodeNetwork.podGateway }]],
      },
    });
  });
  it('CoreDNS serves the cluster zones only and forwards nowhere', () => {
    const text = corefile(nodeNetwork, 1053);
    expect(text.split('\n')[0]).toBe('cluster.local:1053 in-addr.arpa:1053 ip6.arpa:1053 {');
    expect(text).not.toMatch(/forward|proxy|\.:\d+/);
  });
  it('the kube-dns Service comes first and maps 53 to CoreDNS', () => {
    const docs = parseAllDocuments(dnsManifests(nodeNetwork, 'coredns:x')).map((d) => d.toJSON());
    expect(docs[0]).toMatchObject({
      kind: 'Service',
      metadata: { name: 'kube-dns', namespace: 'kube-system' },
      spec: { clusterIP: nodeNetwork.dnsIP },
    });
    expect(
      docs[0].spec.ports.map((p: { port: number; targetPort: number }) => [p.port, p.targetPort]),
    ).toEqual([
      [53, 1053],
      [53, 1053],
    ]);
    expect(docs.map((d) => d.kind)).toEqual([
      'Service',
      'ServiceAccount',
      'ClusterRole',
      'ClusterRoleBinding',
      'ConfigMap',
      'Deployment',
    ]);
  });
});
