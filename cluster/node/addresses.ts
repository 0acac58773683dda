// The local node's addresses, all private and held by devices the cluster creates, so nothing a
// Pod or Service sends has a route off the machine:
// - the node IP (the kubelet's InternalIP, where the API server listens for Pods) sits as a /32 on
//   a bridge with no ports, which also carries the Service range: a ClusterIP kube-proxy has no
//   rule for dies there instead of following the default route (kube-proxy's IPVS mode uses a
//   dummy device the same way; this kernel has no dummy link type);
// - Pods live on their own bridge, without masquerading.
export const nodeNetwork = {
  nodeIP: '10.95.0.1',
  guardBridge: 'obs-guard0',
  podBridge: 'obs-pods0',
  podCIDR: '10.244.0.0/24',
  podGateway: '10.244.0.1',
  clusterCIDR: '10.244.0.0/16',
  serviceCIDR: '10.96.0.0/16',
  dnsIP: '10.96.0.10',
  clusterDomain: 'cluster.local',
  /** iptables chain (mangle table, which kube-proxy never edits) dropping Pod traffic to non-Pods. */
  guardChain: 'OBS-POD-GUARD',
} as const;

export type NodeNetwork = typeof nodeNetwork;
