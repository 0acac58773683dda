/**
 * The upgrade scenario of cluster/scenario/scenario.ts on a kind cluster: the images built here
 * (observatory:dev, the datastore and analytics-server images) imported into the node, the
 * datastores as Pods of those images, the chart installed with two operator replicas, and a
 * release 3 deployment walked to EventsOnly with the row comparison while the operator's leader is
 * killed at random moments. ClickHouse's HTTP interface, PostgreSQL and the web Pods are
 * reached through `kubectl port-forward`.
 */
import { strict as assert } from 'node:assert';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { createClient } from '@clickhouse/client';
import { helm as helmTool, toolStep } from '../../cluster/go-tools.ts';
import { importArchive, type KindCluster } from '../../cluster/kind/cluster.ts';
import {
  analyticsImageName,
  datastoreImageName,
  ensureScenarioImages,
} from '../../cluster/kind/datastore-images.ts';
import type { KindImages } from '../../cluster/kind/images.ts';
import {
  afterCutover,
  countData,
  createRelease3,
  type Obsvc,
  type Platform,
  sendTraffic,
  walkToEventsOnly,
} from '../../cluster/scenario/scenario.ts';
import type { StepReporter } from '../../cluster/steps.ts';
import { waitFor } from '../../cluster/wait.ts';
import { helm } from '../chart/helm.ts';
import { cli } from '../fixtures/service.ts';
import { chartDir } from '../tools/paths.ts';
import { leaderChaos } from './leader-chaos.ts';

const NS = 'obs';

function datastores(): string {
  const deployment = (name: string, image: string, command: string, port: number, volume = false) => ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: NS },
    spec: {
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: {
          containers: [
            {
              name,
              image,
              imagePullPolicy: 'Never',
              ...(command ? { command: ['bash', '-c', command] } : {}),
              ports: [{ containerPort: port }],
              readinessProbe: { tcpSocket: { port }, periodSeconds: 2 },
              ...(volume ? { volumeMounts: [{ name: 'data', mountPath: '/data' }] } : {}),
            },
          ],
          ...(volume ? { volumes: [{ name: 'data', emptyDir: {} }] } : {}),
        },
      },
    },
  });
  const service = (name: string, port: number) => ({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace: NS },
    spec: { selector: { app: name }, ports: [{ port }] },
  });
  // A throwaway cluster: trust authentication inside the cluster, as the official image's
  // POSTGRES_HOST_AUTH_METHOD=trust; the password in the URL is then never checked.
  const postgres = [
    'install -d -o postgres -m 0700 /data/pg',
    'runuser -u postgres -- initdb -D /data/pg --auth=trust -U postgres >/dev/null',
    // initdb lets in local connections only; the Pods of the deployment connect over the network.
    'echo "host all all 0.0.0.0/0 trust" >> /data/pg/pg_hba.conf',
    'exec runuser -u postgres -- postgres -D /data/pg -c listen_addresses=* -c unix_socket_directories=/tmp',
  ].join(' && ');
  const objects = [
    deployment('postgres', datastoreImageName, postgres, 5432, true),
    service('postgres', 5432),
    deployment(
      'redis',
      datastoreImageName,
      'exec redis-server --bind 0.0.0.0 --protected-mode no --save ""',
      6379,
    ),
    service('redis', 6379),
    deployment('clickhouse', analyticsImageName, '', 8123, true),
    service('clickhouse', 8123),
    {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'datastores', namespace: NS },
      stringData: {
        database: `postgres://postgres:postgres@postgres.${NS}:5432/postgres`,
        clickhouse: `http://clickhouse.${NS}:8123`,
        redis: `redis://redis.${NS}:6379`,
      },
    },
  ];
  return objects.map((o) => JSON.stringify(o)).join('\n');
}

export async function runScenario(
  cluster: KindCluster,
  images: KindImages,
  steps: StepReporter,
): Promise<void> {
  const scenarioImages = await ensureScenarioImages(steps);
  await steps.run('importing observatory:dev and the datastore images into the node', async (progress) => {
    for (const archive of [scenarioImages.app, scenarioImages.datastores, scenarioImages.analytics]) {
      progress(archive);
      await importArchive(cluster, archive);
    }
  });
  const kubectlArgs = (args: string[]) => ['kubectl', '--kubeconfig', cluster.kubeconfig, ...args];
  const kubectl = (args: string[], input?: string) => {
    const r = spawnSync(images.kindnode, kubectlArgs(args), {
      encoding: 'utf8',
      input,
      maxBuffer: 64 * 1024 * 1024,
    });
    return { code: r.status ?? -1, stdout: r.stdout ?? '', stderr: r.stderr ?? r.error?.message ?? '' };
  };
  const must = (args: string[], input?: string) => {
    const r = kubectl(args, input);
    if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed: ${r.stderr.trim()}`);
    return r.stdout;
  };
  const forwards: ChildProcess[] = [];
  /** `kubectl port-forward` to a local port; resolves with the URL once forwarding. */
  const forward = (target: string, port: number): Promise<{ url: string; child: ChildProcess }> => {
    const child = spawn(images.kindnode, kubectlArgs(['port-forward', '-n', NS, target, `:${port}`]));
    forwards.push(child);
    return new Promise((resolve, reject) => {
      child.stdout!.on('data', (chunk: Buffer) => {
        const m = /127\.0\.0\.1:(\d+)/.exec(chunk.toString());
        if (m) resolve({ url: `http://127.0.0.1:${m[1]}`, child });
      });
      child.on('exit', (code) => reject(new Error(`port-forward ${target} exited ${code}`)));
    });
  };
  try {
    await steps.run('datastores (PostgreSQL, Redis, analytics-server) as Pods', async () => {
      kubectl(['create', 'namespace', NS]);
      must(['apply', '-f', '-'], datastores());
      must([
        '-n',
        NS,
        'rollout',
        'status',
        'deploy/postgres',
        'deploy/redis',
        'deploy/clickhouse',
        '--timeout=300s',
      ]);
    });
    // helm is built from the Go module proxy on first use: a step of its own, not a silent install.
    await toolStep(helmTool, steps);
    await steps.run('helm install (the operator)', async (progress) => {
      const installed = await helm([
        'upgrade',
        '--install',
        'obs',
        chartDir,
        '--kubeconfig',
        cluster.kubeconfig,
        '--namespace',
        'observatory-system',
        '--create-namespace',
        '--set',
        'image.tag=dev',
        '--set',
        'image.pullPolicy=Never',
        '--set',
        'replicaCount=2',
        '--set',
        `operator.watchNamespace=${NS}`,
        '--wait',
        '--timeout',
        '5m',
      ]);
      if (installed.code !== 0) throw new Error(`helm install failed: ${installed.stderr}`);
      progress(installed.stdout.trim().split('\n').slice(0, 3).join('; '));
    });

    const ch = createClient({ url: (await forward('svc/clickhouse', 8123)).url });
    const pg = (await forward('svc/postgres', 5432)).url.replace('http://', 'postgres://postgres:postgres@');
    let web: ChildProcess | undefined;
    const get = async (name: string) =>
      JSON.parse(must(['-n', NS, 'get', 'obsvc', name, '-o', 'json'])) as Obsvc;
    const p: Platform = {
      ns: NS,
      kubectl,
      get,
      waitFor: (name, what, check, timeoutMs = 300_000) =>
        waitFor(
          what,
          async () => {
            const o = await get(name);
            return check(o) ? o : undefined;
          },
          { timeoutMs, intervalMs: 2_000 },
        ),
      // A fresh forward each time: the web Pods are replaced at every mode change.
      webUrl: async () => {
        web?.kill();
        must([
          '-n',
          NS,
          'wait',
          '--for=condition=Available',
          'deploy',
          '-l',
          'app.kubernetes.io/component=web',
          '--timeout=300s',
        ]);
        const svc = JSON.parse(
          must(['-n', NS, 'get', 'svc', '-l', 'app.kubernetes.io/component=web', '-o', 'json']),
        ).items[0].metadata.name as string;
        const f = await forward(`svc/${svc}`, 3000);
        web = f.child;
        return f.url;
      },
      query: async <T>(sql: string, params?: Record<string, unknown>) =>
        (
          await ch.query({ query: sql, format: 'JSONEachRow', ...(params ? { query_params: params } : {}) })
        ).json<T>(),
      createProject: async (name) => {
        const r = await cli(['create-project', '--name', name, '--json'], {
          DATABASE_URL: pg,
          SERVICE_RELEASE: '3',
        });
        if (r.code !== 0) throw new Error(r.stderr);
        return JSON.parse(r.stdout);
      },
    };

    const { project } = await steps.run('release 3 (Ready)', () => createRelease3(p, 'kind'));
    await steps.run('traffic from the release 3 SDKs', () => sendTraffic(p, project, 'v3'));
    const chaos = leaderChaos(kubectl, 'observatory-system', (line) => console.log(`  ${line}`));
    const walk = steps.run('walk to EventsOnly (two operator replicas, the leader killed at random)', () =>
      walkToEventsOnly(p, 'kind', project),
    );
    const { steps: walked } = await walk.finally(() => chaos.stop());
    const kills = await chaos.stop();
    assert.ok(kills.length > 0, 'no operator leader was killed during the walk');
    const moved = await countData(p, project.projectId);
    assert.equal(moved.missingTraces, 0);
    assert.equal(moved.missingObservations, 0);
    const after = await afterCutover(p, project);
    assert.equal(after.batchStatus, 207);
    assert.deepEqual(
      after.batchBody.errors.map((e) => e.status),
      [400, 400],
    );
    assert.equal(after.legacyStatus, 404);
    assert.ok(after.directRows > 0);
    await ch.close();
    for (const s of walked) console.log(`${(s.ms / 1000).toFixed(1).padStart(7)}s  ${s.name}`);
    console.log(`rows moved: ${JSON.stringify(moved)}`);
    console.log(`operator leaders killed: ${kills.map((k) => `${k.pod} at ${k.atSeconds}s`).join(', ')}`);
  } finally {
    for (const f of forwards) f.kill();
  }
}
