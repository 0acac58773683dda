// A kind cluster of one node from the node image built here, on the engine's guarded network:
// - kindnetd and local-path-provisioner are replaced by what the node image carries (a CNI bridge,
//   a StorageClass), so kind applies no manifest naming an image the node lacks;
// - kubeadm skips its CoreDNS add-on, whose Corefile forwards unknown names to the node's
//   resolvers; the cluster DNS is the local cluster's own (cluster/node/dns.ts): CoreDNS built
//   here, answering cluster.local and the reverse zones only, with no forward plugin in the binary;
// - the kubelet runs on this machine's cgroup v1 with a warning instead of refusing.
import { spawn } from 'node:child_process';
import { createReadStream } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { stringify } from 'yaml';
import { corednsImageName } from '../images/coredns-image.ts';
import { nodeNetwork as clusterAddresses } from '../node/addresses.ts';
import { dnsManifests } from '../node/dns.ts';
import type { Log } from '../steps.ts';
import { waitFor } from '../wait.ts';
import { docker, engineEnv, nodeNetwork } from './engine.ts';
import { must, run } from './run.ts';

export interface KindCluster {
  name: string;
  kubeconfig: string;
  nodeName: string;
  nodeIP: string;
  kubectl(args: string[], input?: string): Promise<string>;
}

function kindConfig(image: string): string {
  return stringify({
    kind: 'Cluster',
    apiVersion: 'kind.x-k8s.io/v1alpha4',
    networking: {
      ipFamily: 'ipv4',
      disableDefaultCNI: true,
      podSubnet: clusterAddresses.clusterCIDR,
      serviceSubnet: clusterAddresses.serviceCIDR,
    },
    nodes: [{ role: 'control-plane', image }],
    kubeadmConfigPatches: [
      // A merge patch replaces the list: kind's own entry (preflight) is kept.
      stringify({ kind: 'InitConfiguration', skipPhases: ['preflight', 'addon/coredns'] }),
      stringify({ kind: 'KubeletConfiguration', failCgroupV1: false }),
    ],
  });
}

/** Lines of a child's output as they come, for a step's progress. */
async function streamed(file: string, args: string[], env: NodeJS.ProcessEnv, progress: Log): Promise<void> {
  const child = spawn(file, args, { env: { ...process.env, ...env } });
  const tail: string[] = [];
  const onData = (chunk: Buffer) => {
    for (const line of chunk.toString().split(/\r?\n/)) {
      const clean = line.trim();
      if (!clean) continue;
      progress(clean);
      tail.push(clean);
      if (tail.length > 30) tail.shift();
    }
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  const code = await new Promise<number>((resolve) => child.on('close', (c) => resolve(c ?? -1)));
  if (code !== 0)
    throw new Error(`${file} ${args.slice(0, 3).join(' ')} failed (exit ${code}):\n${tail.join('\n')}`);
}

interface CreateOptions {
  name: string;
  kind: string;
  /** The kindnode binary, whose `kubectl` is of the cluster's release. */
  kindnode: string;
  nodeImage: string;
  kubeconfig: string;
  work: string;
}

export async function createCluster(o: CreateOptions, progress: Log): Promise<KindCluster> {
  const existing = (await must(o.kind, ['get', 'clusters'], { env: engineEnv })).split('\n');
  if (existing.includes(o.name)) {
    progress(`deleting the cluster ${o.name} a previous run left`);
    await must(o.kind, ['delete', 'cluster', '--name', o.name], { env: engineEnv });
  }
  const config = `${o.work}/kind-config.yaml`;
  await writeFile(config, kindConfig(o.nodeImage));
  await streamed(
    o.kind,
    ['create', 'cluster', '--name', o.name, '--config', config, '--kubeconfig', o.kubeconfig, '--wait', '0s'],
    engineEnv,
    progress,
  );
  return attach(o, progress);
}

/** The cluster's node and its address, and the cluster DNS once it answers. */
async function attach(o: CreateOptions, progress: Log): Promise<KindCluster> {
  const nodeName = `${o.name}-control-plane`;
  const inspect = await docker([
    'inspect',
    '--format',
    `{{(index .NetworkSettings.Networks "${nodeNetwork.name}").IPAddress}}`,
    nodeName,
  ]);
  const nodeIP = inspect.stdout.trim();
  if (inspect.code !== 0 || !nodeIP) throw new Error(`docker inspect ${nodeName}: ${inspect.stderr.trim()}`);
  const kubectl = (args: string[], input?: string) =>
    must(o.kindnode, ['kubectl', '--kubeconfig', o.kubeconfig, ...args], { input });
  progress(`node ${nodeName} at ${nodeIP}; installing the cluster DNS`);
  await kubectl(['apply', '-f', '-'], dnsManifests(clusterAddresses, corednsImageName));
  await kubectl(['wait', '--for=condition=Ready', 'node', '--all', '--timeout=180s']);
  await kubectl(['-n', 'kube-system', 'rollout', 'status', 'deployment/coredns', '--timeout=180s']);
  await waitFor(
    'kube-proxy',
    async () =>
      (
        await run(o.kindnode, [
          'kubectl',
          '--kubeconfig',
          o.kubeconfig,
          '-n',
          'kube-system',
          'rollout',
          'status',
          'daemonset/kube-proxy',
          '--timeout=5s',
        ])
      ).code === 0,
    { timeoutMs: 180_000, intervalMs: 2_000 },
  );
  return { name: o.name, kubeconfig: o.kubeconfig, nodeName, nodeIP, kubectl };
}

export async function deleteCluster(kind: string, name: string): Promise<void> {
  await must(kind, ['delete', 'cluster', '--name', name], { env: engineEnv });
}

/** Imports an image archive (OCI or docker) into the node's containerd, as `kind load` does. */
export async function importArchive(cluster: KindCluster, archive: string): Promise<void> {
  const child = spawn(
    'docker',
    ['exec', '-i', cluster.nodeName, 'ctr', '--namespace=k8s.io', 'images', 'import', '--all-platforms', '-'],
    { env: { ...process.env, ...engineEnv } },
  );
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  child.stdout.resume();
  createReadStream(archive).pipe(child.stdin);
  const code = await new Promise<number>((resolve) => child.on('close', (c) => resolve(c ?? -1)));
  if (code !== 0) throw new Error(`ctr images import ${archive} in ${cluster.nodeName}: ${stderr.trim()}`);
}
