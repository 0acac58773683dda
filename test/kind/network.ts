// The network rule on kind, checked rather than assumed: the node reaches no outside address and
// its resolver answers no outside name, and a Pod resolves and reaches cluster names but
// neither resolves nor reaches an outside one. Prints what it saw (the node's routes and resolver,
// the cluster DNS configuration) so a run's log shows the setup.
import { strict as assert } from 'node:assert';
import type { KindCluster } from '../../cluster/kind/cluster.ts';
import { docker } from '../../cluster/kind/engine.ts';
import { run } from '../../cluster/kind/run.ts';
import type { Log } from '../../cluster/steps.ts';
import { waitFor } from '../../cluster/wait.ts';

// Names and addresses of the outside world a Pod must not get to (a well-known resolver's address,
// so no DNS is needed to try it).
const outsideName = 'example.com';
const outsideAddress = '1.1.1.1';

const probe = `
getent hosts kubernetes.default.svc.cluster.local >/dev/null && echo "cluster-name: resolved" || echo "cluster-name: FAILED"
timeout 5 bash -c '</dev/tcp/kubernetes.default.svc.cluster.local/443' 2>/dev/null && echo "cluster-service: reached" || echo "cluster-service: FAILED"
getent hosts ${outsideName} >/dev/null && echo "outside-name: RESOLVED" || echo "outside-name: not resolved"
timeout 5 bash -c '</dev/tcp/${outsideAddress}/443' 2>/dev/null && echo "outside-address: REACHED" || echo "outside-address: not reached"
`;

async function onNode(cluster: KindCluster, command: string): Promise<{ code: number; out: string }> {
  const r = await docker(['exec', cluster.nodeName, 'bash', '-c', command]);
  return { code: r.code, out: `${r.stdout}${r.stderr}`.trim() };
}

export async function checkNoRouteOut(cluster: KindCluster, shellImage: string, log: Log): Promise<void> {
  const routes = await onNode(cluster, 'ip -4 route');
  log(`node routes: ${routes.out.split('\n').join('; ')}`);
  const guard = await run('iptables', ['-w', '-S', 'DOCKER-USER']);
  log(`engine's DOCKER-USER: ${guard.stdout.trim().split('\n').join('; ')}`);
  const nodeConnect = await onNode(cluster, `timeout 5 bash -c '</dev/tcp/${outsideAddress}/443'`);
  assert.notEqual(nodeConnect.code, 0, `the kind node reached ${outsideAddress}:443`);
  log(`node: ${outsideAddress}:443 not reached`);
  const resolver = await onNode(cluster, 'grep -v "^#" /etc/resolv.conf');
  log(`node resolv.conf: ${resolver.out.split('\n').join('; ')}`);
  const nodeLookup = await onNode(cluster, `getent hosts ${outsideName}`);
  assert.notEqual(nodeLookup.code, 0, `the kind node resolved ${outsideName}: ${nodeLookup.out}`);
  log(`node: ${outsideName} not resolved`);
  const corefile = await cluster.kubectl([
    '-n',
    'kube-system',
    'get',
    'configmap',
    'coredns',
    '-o',
    'jsonpath={.data.Corefile}',
  ]);
  log(
    `cluster DNS Corefile: ${corefile
      .trim()
      .split('\n')
      .map((l) => l.trim())
      .join(' ')}`,
  );
  assert.ok(!/forward|proxy/.test(corefile), 'the Corefile forwards');

  const pod = 'network-probe';
  await cluster.kubectl(['delete', 'pod', pod, '--ignore-not-found', '--wait=true']);
  await cluster.kubectl(
    ['apply', '-f', '-'],
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: pod, namespace: 'default' },
      spec: {
        restartPolicy: 'Never',
        containers: [
          { name: 'probe', image: shellImage, imagePullPolicy: 'Never', command: ['bash', '-c', probe] },
        ],
      },
    }),
  );
  await waitFor(
    'the network probe Pod',
    async () => {
      const phase = await cluster.kubectl(['get', 'pod', pod, '-o', 'jsonpath={.status.phase}']);
      return phase === 'Succeeded' || phase === 'Failed';
    },
    { timeoutMs: 120_000, intervalMs: 1_000 },
  );
  const out = (await cluster.kubectl(['logs', pod])).trim();
  for (const line of out.split('\n')) log(`Pod: ${line}`);
  await cluster.kubectl(['delete', 'pod', pod, '--wait=false']);
  assert.match(out, /cluster-name: resolved/);
  assert.match(out, /cluster-service: reached/);
  assert.match(out, /outside-name: not resolved/);
  assert.match(out, /outside-address: not reached/);
}
