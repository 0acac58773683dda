// The local cluster with its real node: containerd, runc, the kubelet and kube-proxy built from
// the control plane's Kubernetes version, CNI bridge networking and CoreDNS, running Pods from
// the image built from ./Dockerfile. Judged by kubectl and by the kernel (routes, iptables
// counters), not by the code that set them up.
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import type { LocalClusterClient } from '../../cluster/local-cluster.ts';
import { nodeNetwork } from '../../cluster/node/addresses.ts';
import { sh } from '../../cluster/node/host.ts';
import { waitFor } from '../../cluster/wait.ts';
import { createNamespace, deleteNamespaces, localCluster } from './testing.ts';

let cluster: LocalClusterClient;
const ns = 'node';

/** A container running a Node.js script with the project's image. */
function nodeScript(name: string, script: string) {
  return {
    name,
    image: 'observatory:dev',
    imagePullPolicy: 'Never',
    command: ['node', '-e', script],
    securityContext: { runAsNonRoot: true, readOnlyRootFilesystem: true, allowPrivilegeEscalation: false },
  };
}

const webScript = `require('node:http').createServer((req, res) => res.end('hello from ' + process.env.HOSTNAME)).listen(8080)`;

const clientScript = (NS: string) => `
const dns = require('node:dns').promises;
const http = require('node:http');
const get = (url) => new Promise((resolve, reject) => {
  http.get(url, { timeout: 10000 }, (res) => { let body = ''; res.on('data', (c) => (body += c)); res.on('end', () => resolve(body)); })
    .on('timeout', function () { this.destroy(new Error('timeout')); }).on('error', reject);
});
(async () => {
  const { address } = await dns.lookup('web.${NS}.svc.cluster.local');
  const body = await get('http://web.${NS}.svc.cluster.local:8080/');
  const external = await dns.lookup('example.com').then((r) => 'resolved ' + r.address, (e) => e.code);
  const offMachine = await get('http://192.0.2.1:80/').then(() => 'answered', (e) => e.code || e.message);
  console.log(JSON.stringify({ address, body, external, offMachine }));
})().catch((e) => { console.error(e); process.exit(1); });
`;

async function guardDrops(): Promise<number> {
  const listing = await sh('iptables', [
    '-w',
    '-t',
    'mangle',
    '-L',
    nodeNetwork.guardChain,
    '-v',
    '-x',
    '-n',
  ]);
  const drop = listing.split('\n').find((line) => /\bDROP\b/.test(line));
  return Number(drop?.trim().split(/\s+/)[0] ?? Number.NaN);
}

beforeAll(async () => {
  cluster = localCluster();
  await createNamespace(cluster, ns);
});

afterAll(async () => {
  await deleteNamespaces(cluster, [ns]);
});

describe('local cluster with a real node', () => {
  it('kept every packet on the machine before the kubelet started (read back from the kernel)', async () => {
    expect(cluster.safety.map((c) => [c.check, c.ok])).toEqual(cluster.safety.map((c) => [c.check, true]));
    expect(cluster.safety.length).toBeGreaterThanOrEqual(5);
    const cni = JSON.parse(await readFile(`${cluster.dataDir}/cni/10-observatory.conflist`, 'utf8'));
    expect(cni.plugins[0]).toMatchObject({ type: 'bridge', ipMasq: false });
    const corefile = await cluster.kubectl([
      'get',
      'configmap',
      'coredns',
      '-n',
      'kube-system',
      '-o',
      'jsonpath={.data.Corefile}',
    ]);
    expect(corefile).not.toMatch(/\bforward\b/);
  });

  it('kubectl shows the real kubelet with containerd as its runtime', async () => {
    const wide = await cluster.kubectl(['get', 'nodes', '-o', 'wide']);
    console.log(wide);
    const node = JSON.parse(await cluster.kubectl(['get', 'node', cluster.nodeName, '-o', 'json']));
    expect(node.status.nodeInfo.kubeletVersion).toBe(cluster.version);
    expect(node.status.nodeInfo.containerRuntimeVersion).toMatch(/^containerd:\/\/v?2\./);
    expect(node.status.addresses).toContainEqual({ type: 'InternalIP', address: nodeNetwork.nodeIP });
    expect(wide).toMatch(/containerd:\/\//);
    // The `kubernetes` Service has the API server's non-loopback address as its endpoint.
    const endpoints = await cluster.kubectl([
      'get',
      'endpointslices',
      '-l',
      'kubernetes.io/service-name=kubernetes',
      '-o',
      'jsonpath={.items[*].endpoints[*].addresses[*]}',
    ]);
    expect(endpoints.trim()).toBe(nodeNetwork.nodeIP);
  });

  it("a Pod resolves another Pod's Service by DNS name and reaches it; nothing leaves the machine", async () => {
    const dropsBefore = await guardDrops();
    const web = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'web', namespace: ns, labels: { app: 'web' } },
      spec: {
        terminationGracePeriodSeconds: 1,
        containers: [
          {
            ...nodeScript('web', webScript),
            ports: [{ containerPort: 8080 }],
            readinessProbe: { httpGet: { path: '/', port: 8080 }, periodSeconds: 1 },
          },
        ],
      },
    };
    const service = {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'web', namespace: ns },
      spec: { selector: { app: 'web' }, ports: [{ port: 8080, targetPort: 8080 }] },
    };
    await cluster.kubectl(['apply', '-f', '-'], [web, service].map((o) => stringify(o)).join('---\n'));
    await cluster.kubectl(['wait', '-n', ns, '--for=condition=Ready', 'pod/web', '--timeout=120s']);
    const client = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'client', namespace: ns },
      spec: {
        restartPolicy: 'Never',
        terminationGracePeriodSeconds: 1,
        containers: [nodeScript('client', clientScript(ns))],
      },
    };
    await cluster.kubectl(['apply', '-f', '-'], stringify(client));
    const phase = await waitFor(
      'client Pod finished',
      async () => {
        const p = (
          await cluster.kubectl(['get', 'pod', 'client', '-n', ns, '-o', 'jsonpath={.status.phase}'])
        ).trim();
        return p === 'Succeeded' || p === 'Failed' ? p : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 500 },
    );
    const logs = await cluster.kubectl(['logs', '-n', ns, 'client']);
    expect(phase, logs).toBe('Succeeded');
    const result = JSON.parse(logs.trim().split('\n').pop() ?? '{}');
    const clusterIP = (
      await cluster.kubectl(['get', 'service', 'web', '-n', ns, '-o', 'jsonpath={.spec.clusterIP}'])
    ).trim();
    expect(result.address).toBe(clusterIP);
    expect(result.body).toBe('hello from web');
    // No upstream: a name outside cluster.local does not resolve; an off-machine address is unreachable.
    expect(result.external).not.toMatch(/^resolved/);
    expect(result.offMachine).not.toBe('answered');
    expect(await guardDrops()).toBeGreaterThan(dropsBefore);

    const pods = JSON.parse(await cluster.kubectl(['get', 'pods', '-A', '-o', 'json'])).items as {
      metadata: { name: string };
      status: { podIP: string; containerStatuses: { containerID: string }[] };
    }[];
    const ids = pods.flatMap((p) => p.status.containerStatuses.map((c) => c.containerID));
    expect(ids.length).toBeGreaterThanOrEqual(3);
    for (const id of ids) expect(id).toMatch(/^containerd:\/\/[0-9a-f]{64}$/);
    const containerd = (await cluster.ctr(['containers', 'ls', '-q'])).split('\n');
    for (const id of ids) expect(containerd).toContain(id.replace('containerd://', ''));
    for (const pod of pods) expect(pod.status.podIP).toMatch(/^10\.244\.0\.\d+$/);
  });
});

async function runToCompletion(name: string, container: Record<string, unknown>): Promise<string> {
  const pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: ns },
    spec: { restartPolicy: 'Never', terminationGracePeriodSeconds: 1, containers: [{ name, ...container }] },
  };
  await cluster.kubectl(['apply', '-f', '-'], stringify(pod));
  const phase = await waitFor(
    `${name} Pod finished`,
    async () => {
      const p = (
        await cluster.kubectl(['get', 'pod', name, '-n', ns, '-o', 'jsonpath={.status.phase}'])
      ).trim();
      return p === 'Succeeded' || p === 'Failed' ? p : undefined;
    },
    { timeoutMs: 120_000, intervalMs: 500 },
  );
  const logs = await cluster.kubectl(['logs', '-n', ns, name]);
  expect(phase, logs).toBe('Succeeded');
  return logs;
}

describe('the image built from ./Dockerfile', () => {
  it('runs the observatory CLI as its entrypoint, as user 10001, without the embedded engine', async () => {
    const help = await runToCompletion('image-help', {
      image: 'observatory:dev',
      imagePullPolicy: 'Never',
      args: ['help'],
    });
    expect(help).toMatch(/usage: observatory <command>/);
    for (const role of ['operator', 'web', 'worker', 'migrate', 'backfill'])
      expect(help).toMatch(new RegExp(`\\b${role}\\b`));
    const facts = await runToCompletion(
      'image-facts',
      nodeScript(
        'image-facts',
        `let lib = 'present'; try { require.resolve('@chdb/lib-linux-x64-gnu', { paths: ['/app'] }); } catch { lib = 'absent'; }
         console.log(JSON.stringify({ uid: process.getuid(), node: process.version, cwd: process.cwd(), lib }));`,
      ),
    );
    expect(JSON.parse(facts.trim())).toEqual({
      uid: 10001,
      node: 'v24.21.0',
      cwd: '/app',
      lib: 'absent',
    });
  });
});
