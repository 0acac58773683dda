// The configuration files of the node's components, as pure functions of the node's layout.
import { stringify } from 'yaml';
import type { NodeNetwork } from './addresses.ts';

export interface NodeLayout {
  nodeName: string;
  network: NodeNetwork;
  dataDir: string;
  /** containerd's root (content, snapshots, metadata): kept across runs so images are imported once. */
  containerdRoot: string;
  containerdSocket: string;
  /** An empty directory: containerd's registry host configuration, so no registry is known. */
  registryConfigDir: string;
  cniConfDir: string;
  cniBinDir: string;
  runc: string;
  sandboxImage: string;
  caCert: string;
  kubeProxyKubeconfig: string;
  /** resolv.conf for Pods with dnsPolicy Default: no nameserver, so they have no upstream. */
  resolvConf: string;
}

const toml = (value: string) => JSON.stringify(value);

export function containerdConfig(layout: NodeLayout): string {
  const runtime = "plugins.'io.containerd.cri.v1.runtime'";
  const images = "plugins.'io.containerd.cri.v1.images'";
  return [
    'version = 3',
    `root = ${toml(layout.containerdRoot)}`,
    `state = ${toml(`${layout.dataDir}/containerd/state`)}`,
    '',
    '[grpc]',
    `  address = ${toml(layout.containerdSocket)}`,
    '',
    `[${images}]`,
    "  snapshotter = 'overlayfs'",
    `[${images}.pinned_images]`,
    `  sandbox = ${toml(layout.sandboxImage)}`,
    `[${images}.registry]`,
    `  config_path = ${toml(layout.registryConfigDir)}`,
    '',
    `[${runtime}]`,
    // Without CAP_SYS_RESOURCE runc cannot lower oom_score_adj below its own: every sandbox fails.
    '  restrict_oom_score_adj = true',
    `[${runtime}.containerd]`,
    "  default_runtime_name = 'runc'",
    `[${runtime}.containerd.runtimes.runc]`,
    "  runtime_type = 'io.containerd.runc.v2'",
    `[${runtime}.containerd.runtimes.runc.options]`,
    `  BinaryName = ${toml(layout.runc)}`,
    '  SystemdCgroup = false',
    `[${runtime}.cni]`,
    `  bin_dirs = [${toml(layout.cniBinDir)}]`,
    `  conf_dir = ${toml(layout.cniConfDir)}`,
    '',
  ].join('\n');
}

export function cniConfig(layout: NodeLayout): string {
  const { network } = layout;
  return `${JSON.stringify(
    {
      cniVersion: '1.0.0',
      name: 'observatory',
      plugins: [
        {
          type: 'bridge',
          bridge: network.podBridge,
          isGateway: true,
          isDefaultGateway: true,
          // Pod sources are never rewritten to the machine's address: nothing is meant to leave.
          ipMasq: false,
          // A Pod reaching its own Service lands back on itself.
          hairpinMode: true,
          ipam: {
            type: 'host-local',
            ranges: [[{ subnet: network.podCIDR, gateway: network.podGateway }]],
            dataDir: `${layout.dataDir}/cni-ipam`,
          },
        },
      ],
    },
    null,
    2,
  )}\n`;
}

export function kubeletConfig(layout: NodeLayout): string {
  const { network } = layout;
  return stringify({
    apiVersion: 'kubelet.config.k8s.io/v1beta1',
    kind: 'KubeletConfiguration',
    cgroupDriver: 'cgroupfs',
    // The machine has cgroup v1: the kubelet runs with a warning instead of refusing.
    failCgroupV1: false,
    failSwapOn: false,
    containerRuntimeEndpoint: `unix://${layout.containerdSocket}`,
    address: network.nodeIP,
    readOnlyPort: 0,
    healthzBindAddress: '127.0.0.1',
    authentication: {
      anonymous: { enabled: false },
      webhook: { enabled: true },
      x509: { clientCAFile: layout.caCert },
    },
    authorization: { mode: 'Webhook' },
    clusterDNS: [network.dnsIP],
    clusterDomain: network.clusterDomain,
    resolvConf: layout.resolvConf,
    // Images come only by import: collecting them would lose what cannot be pulled back.
    imageGCHighThresholdPercent: 100,
    imageGCLowThresholdPercent: 99,
    // A shared machine's disk and memory are not this node's to police.
    evictionHard: { 'memory.available': '50Mi', 'nodefs.available': '1%', 'imagefs.available': '1%' },
    serializeImagePulls: false,
    rotateCertificates: false,
    // Host sysctls (kernel.panic and friends) are changed by the kubelet only when it must.
    protectKernelDefaults: false,
  });
}

export function kubeProxyConfig(layout: NodeLayout): string {
  const { network } = layout;
  return stringify({
    apiVersion: 'kubeproxy.config.k8s.io/v1alpha1',
    kind: 'KubeProxyConfiguration',
    mode: 'iptables',
    clusterCIDR: network.clusterCIDR,
    hostnameOverride: layout.nodeName,
    bindAddress: network.nodeIP,
    healthzBindAddress: '127.0.0.1:10256',
    metricsBindAddress: '127.0.0.1:10249',
    // NodePorts answer on the node IP only, never on the machine's real interfaces.
    nodePortAddresses: [`${network.nodeIP}/32`],
    clientConnection: { kubeconfig: layout.kubeProxyKubeconfig },
    iptables: { localhostNodePorts: false },
    // Zero: leave the machine's conntrack sysctls alone.
    conntrack: { maxPerCore: 0, min: 0, tcpEstablishedTimeout: '0s', tcpCloseWaitTimeout: '0s' },
  });
}

/** CoreDNS answers the cluster's zones only; with no forward plugin other names are REFUSED. */
export function corefile(network: NodeNetwork, port: number): string {
  return [
    // Each zone names its port: a zone without one would be served on 53.
    `${network.clusterDomain}:${port} in-addr.arpa:${port} ip6.arpa:${port} {`,
    '    errors',
    '    health :8080',
    '    ready :8181',
    `    kubernetes ${network.clusterDomain} in-addr.arpa ip6.arpa {`,
    '        pods insecure',
    '    }',
    '    cache 30',
    '}',
    '',
  ].join('\n');
}
