// What a node leaves on the machine besides its processes, removed once they are gone: Pod
// network namespaces and mounts, the kubelet's iptables chains, kube-proxy's rules, the kubepods
// cgroups, and the directories the kubelet insists on creating at fixed paths.
import { readdir, readFile, rmdir } from 'node:fs/promises';
import { join } from 'node:path';
import { nodeNetwork } from './addresses.ts';
import { sh, shQuiet } from './host.ts';

/** Unmounts everything mounted under prefix, deepest first. */
export async function unmountUnder(prefix: string): Promise<void> {
  const mounts = (await readFile('/proc/self/mountinfo', 'utf8'))
    .split('\n')
    .map((line) => line.split(' ')[4] ?? '')
    .filter((point) => point === prefix || point.startsWith(`${prefix}/`))
    .sort((a, b) => b.length - a.length);
  for (const point of mounts) await shQuiet('umount', ['-l', point]);
}

/** Deletes the kubepods cgroup trees (children first) in every cgroup v1 hierarchy and cgroup2. */
export async function removeKubepodsCgroups(): Promise<void> {
  const roots = (await readdir('/sys/fs/cgroup', { withFileTypes: true }))
    .filter((entry) => entry.isDirectory())
    .map((entry) => join('/sys/fs/cgroup', entry.name, 'kubepods'));
  const removeTree = async (dir: string): Promise<void> => {
    const children = await readdir(dir, { withFileTypes: true }).catch(() => []);
    for (const child of children) if (child.isDirectory()) await removeTree(join(dir, child.name));
    await rmdir(dir).catch(() => {});
  };
  for (const root of roots) await removeTree(root);
}

/** The chains the kubelet creates in filter, nat and mangle (IPv4 and IPv6). */
export async function removeKubeletChains(): Promise<void> {
  for (const tool of ['iptables', 'ip6tables']) {
    for (const table of ['filter', 'nat', 'mangle']) {
      const rules = await sh(tool, ['-w', '-t', table, '-S']).catch(() => '');
      const jumps = rules
        .split('\n')
        .filter((rule) =>
          /^-A \S+ .*-j KUBE-(FIREWALL|KUBELET-CANARY|IPTABLES-HINT|MARK-\S+|POSTROUTING)\b/.test(rule),
        );
      for (const rule of jumps)
        await shQuiet(tool, ['-w', '-t', table, ...rule.replace(/^-A /, '-D ').split(' ')]);
      const chains = rules
        .split('\n')
        .filter((rule) => /^-N KUBE-(FIREWALL|KUBELET-CANARY|IPTABLES-HINT|MARK-\S+|POSTROUTING)$/.test(rule))
        .map((rule) => rule.slice(3));
      for (const chain of chains) await shQuiet(tool, ['-w', '-t', table, '-F', chain]);
      for (const chain of chains) await shQuiet(tool, ['-w', '-t', table, '-X', chain]);
    }
  }
}

/** What a stopped node left on the machine, read back from the kernel; empty when nothing. */
export async function nodeLeftovers(dataDir: string): Promise<string[]> {
  const found: string[] = [];
  const links = await sh('ip', ['-o', 'link', 'show']);
  for (const link of [nodeNetwork.guardBridge, nodeNetwork.podBridge])
    if (links.includes(link)) found.push(`link ${link}`);
  if ((await sh('iptables', ['-w', '-t', 'mangle', '-S'])).includes(nodeNetwork.guardChain))
    found.push(`iptables chain ${nodeNetwork.guardChain}`);
  for (const table of ['filter', 'nat']) {
    const rules = (await sh('iptables', ['-w', '-t', table, '-S'])).split('\n');
    found.push(...rules.filter((r) => r.includes('KUBE-')).map((r) => `iptables ${table}: ${r}`));
  }
  if ((await readdir('/sys/fs/cgroup/memory')).includes('kubepods')) found.push('cgroup memory/kubepods');
  const processes = (await sh('ps', ['-eo', 'pid,args'])).split('\n').filter((l) => l.includes(dataDir));
  found.push(...processes.map((p) => `process ${p.trim()}`));
  return found;
}
