// The node's network on the machine: the guard bridge (node IP, Service range), the iptables
// guard that drops Pod traffic to anything but Pods, and IPv4 forwarding (Pods reach Services
// through the host). Each change is undone by teardown, including the sysctls the kubelet sets.
import { nodeNetwork as net } from './addresses.ts';
import { sh, shQuiet } from './host.ts';

/** Host sysctls the node changes (forwarding here, the rest by the kubelet), restored on teardown. */
const sysctls = ['net/ipv4/ip_forward', 'vm/overcommit_memory', 'kernel/panic', 'kernel/panic_on_oops'];

export type SysctlSnapshot = Record<string, string>;

async function readSysctl(name: string): Promise<string> {
  return (await sh('cat', [`/proc/sys/${name}`])).trim();
}

export async function snapshotSysctls(): Promise<SysctlSnapshot> {
  const snapshot: SysctlSnapshot = {};
  for (const name of sysctls) snapshot[name] = await readSysctl(name);
  return snapshot;
}

export async function restoreSysctls(snapshot: SysctlSnapshot): Promise<void> {
  for (const [name, value] of Object.entries(snapshot))
    await sh('sysctl', ['-qw', `${name.replaceAll('/', '.')}=${value}`]);
}

const guardRule = ['FORWARD', '-s', net.clusterCIDR, '-j', net.guardChain];

export async function setUpHostNetwork(): Promise<void> {
  await tearDownHostNetwork();
  await sh('ip', ['link', 'add', net.guardBridge, 'type', 'bridge']);
  await sh('ip', ['link', 'set', net.guardBridge, 'up']);
  await sh('ip', ['addr', 'add', `${net.nodeIP}/32`, 'dev', net.guardBridge]);
  await sh('ip', ['route', 'add', net.serviceCIDR, 'dev', net.guardBridge]);
  // mangle FORWARD runs before filter FORWARD, where kube-proxy inserts its ACCEPT rules.
  await sh('iptables', ['-w', '-t', 'mangle', '-N', net.guardChain]);
  await sh('iptables', ['-w', '-t', 'mangle', '-A', net.guardChain, '-d', net.clusterCIDR, '-j', 'RETURN']);
  await sh('iptables', ['-w', '-t', 'mangle', '-A', net.guardChain, '-j', 'DROP']);
  await sh('iptables', ['-w', '-t', 'mangle', '-I', ...guardRule]);
  await sh('sysctl', ['-qw', 'net.ipv4.ip_forward=1']);
}

export async function tearDownHostNetwork(): Promise<void> {
  while (await shQuiet('iptables', ['-w', '-t', 'mangle', '-D', ...guardRule])) {}
  await shQuiet('iptables', ['-w', '-t', 'mangle', '-F', net.guardChain]);
  await shQuiet('iptables', ['-w', '-t', 'mangle', '-X', net.guardChain]);
  for (const link of [net.guardBridge, net.podBridge]) await shQuiet('ip', ['link', 'del', link]);
}

export interface SafetyCheck {
  check: string;
  ok: boolean;
  detail: string;
}

/** What keeps packets on the machine, read back from the kernel. */
export async function networkSafety(): Promise<SafetyCheck[]> {
  const checks: SafetyCheck[] = [];
  const route = (await sh('ip', ['-o', 'route', 'get', '10.96.200.200'])).trim();
  checks.push({
    check: `an unserved ClusterIP routes to ${net.guardBridge}`,
    ok: route.includes(`dev ${net.guardBridge}`),
    detail: route,
  });
  const ports = (await sh('ip', ['-o', 'link', 'show', 'master', net.guardBridge])).trim();
  checks.push({ check: `${net.guardBridge} has no ports`, ok: ports === '', detail: ports || 'none' });
  const nodeRoute = (await sh('ip', ['-o', 'route', 'get', net.nodeIP])).trim();
  checks.push({ check: 'the node IP is local', ok: /^local /.test(nodeRoute), detail: nodeRoute });
  const forward = await sh('iptables', ['-w', '-t', 'mangle', '-S', 'FORWARD']);
  checks.push({
    check: 'Pod traffic to non-Pods is dropped (mangle FORWARD)',
    ok: forward.includes(`-A FORWARD -s ${net.clusterCIDR} -j ${net.guardChain}`),
    detail: forward.trim(),
  });
  const chain = await sh('iptables', ['-w', '-t', 'mangle', '-S', net.guardChain]);
  checks.push({
    check: `${net.guardChain} returns Pod destinations and drops the rest`,
    ok: chain.includes(`-d ${net.clusterCIDR} -j RETURN`) && /-A \S+ -j DROP/.test(chain),
    detail: chain.trim(),
  });
  return checks;
}
