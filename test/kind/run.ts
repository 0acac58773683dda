/**
 * `npm run test:kind`: the upgrade scenario of cluster/scenario/scenario.ts on a kind cluster, for machines
 * with Docker. Builds the image from ./Dockerfile, loads it into kind, runs the datastores as Pods
 * (their official images), installs the chart and walks a release 3 deployment to EventsOnly. The
 * web Pods, ClickHouse and PostgreSQL are reached through `kubectl port-forward`.
 * Exits at once, saying what is missing, when docker or kind cannot be used.
 */

import { strict as assert } from 'node:assert';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from '@clickhouse/client';
import {
  afterCutover,
  countData,
  createRelease3,
  type Obsvc,
  type Platform,
  sendTraffic,
  walkToEventsOnly,
} from '../../cluster/scenario/scenario.ts';
import { waitFor } from '../../cluster/wait.ts';
import { helm } from '../chart/helm.ts';
import { cli, ROOT } from '../fixtures/service.ts';
import { chartDir } from '../tools/paths.ts';

const CLUSTER = process.env['KIND_CLUSTER'] ?? 'observatory-e2e';
const NS = 'obs';
const run = (cmd: string, args: string[], input?: string) => {
  const r = spawnSync(cmd, args, { encoding: 'utf8', input, maxBuffer: 64 * 1024 * 1024 });
  return { code: r.status ?? -1, stdout: r.stdout ?? '', stderr: r.stderr ?? r.error?.message ?? '' };
};
const must = (cmd: string, args: string[], input?: string) => {
  const r = run(cmd, args, input);
  if (r.code !== 0) throw new Error(`${cmd} ${args.join(' ')} failed: ${r.stderr.trim()}`);
  return r.stdout;
};

// Fail fast: nothing below can work without a Docker engine, kind and kubectl.
for (const [tool, args, hint] of [
  ['docker', ['info', '--format', '{{.ServerVersion}}'], 'a running Docker engine'],
  ['kind', ['version'], 'kind (https://kind.sigs.k8s.io)'],
  ['kubectl', ['version', '--client'], 'kubectl'],
] as const) {
  const r = run(tool, [...args]);
  if (r.code !== 0) {
    console.error(
      `test:kind needs ${hint}: \`${tool} ${args.join(' ')}\` failed (${r.stderr.trim().split('\n')[0] || `exit ${r.code}`}).`,
    );
    process.exit(1);
  }
}

const work = mkdtempSync(join(tmpdir(), 'observatory-kind-'));
const kubeconfig = join(work, 'kubeconfig');
const kubectl = (args: string[], stdin?: string) =>
  run('kubectl', ['--kubeconfig', kubeconfig, ...args], stdin);
const forwards: ChildProcess[] = [];

/** `kubectl port-forward` to a local port; resolves with the URL once forwarding. */
function forward(
  target: string,
  port: number,
  scheme = 'http',
): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn('kubectl', ['--kubeconfig', kubeconfig, 'port-forward', '-n', NS, target, `:${port}`]);
  forwards.push(child);
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      const m = /127\.0\.0\.1:(\d+)/.exec(chunk.toString());
      if (m) resolve({ url: `${scheme}://127.0.0.1:${m[1]}`, child });
    });
    child.on('exit', (code) => reject(new Error(`port-forward ${target} exited ${code}`)));
  });
}

const datastores = `
apiVersion: apps/v1
kind: Deployment
metadata: {name: postgres, namespace: ${NS}}
spec:
  selector: {matchLabels: {app: postgres}}
  template:
    metadata: {labels: {app: postgres}}
    spec:
      containers: [{name: postgres, image: "postgres:17", env: [{name: POSTGRES_PASSWORD, value: postgres}], ports: [{containerPort: 5432}]}]
---
apiVersion: v1
kind: Service
metadata: {name: postgres, namespace: ${NS}}
spec: {selector: {app: postgres}, ports: [{port: 5432}]}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: redis, namespace: ${NS}}
spec:
  selector: {matchLabels: {app: redis}}
  template:
    metadata: {labels: {app: redis}}
    spec:
      containers: [{name: redis, image: "redis:7", ports: [{containerPort: 6379}]}]
---
apiVersion: v1
kind: Service
metadata: {name: redis, namespace: ${NS}}
spec: {selector: {app: redis}, ports: [{port: 6379}]}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: clickhouse, namespace: ${NS}}
spec:
  selector: {matchLabels: {app: clickhouse}}
  template:
    metadata: {labels: {app: clickhouse}}
    spec:
      containers: [{name: clickhouse, image: "clickhouse/clickhouse-server:25.12", env: [{name: CLICKHOUSE_SKIP_USER_SETUP, value: "1"}], ports: [{containerPort: 8123}]}]
---
apiVersion: v1
kind: Service
metadata: {name: clickhouse, namespace: ${NS}}
spec: {selector: {app: clickhouse}, ports: [{port: 8123}]}
---
apiVersion: v1
kind: Secret
metadata: {name: datastores, namespace: ${NS}}
stringData:
  database: postgres://postgres:postgres@postgres.${NS}:5432/postgres
  clickhouse: http://clickhouse.${NS}:8123
  redis: redis://redis.${NS}:6379
`;

async function main() {
  const started = performance.now();
  console.log('docker build -t observatory:dev .');
  must('docker', ['build', '-t', 'observatory:dev', ROOT]);
  if (!must('kind', ['get', 'clusters']).split('\n').includes(CLUSTER)) {
    must('kind', ['create', 'cluster', '--name', CLUSTER, '--wait', '120s']);
  }
  writeFileSync(kubeconfig, must('kind', ['get', 'kubeconfig', '--name', CLUSTER]));
  must('kind', ['load', 'docker-image', 'observatory:dev', '--name', CLUSTER]);
  kubectl(['create', 'namespace', NS]);
  must('kubectl', ['--kubeconfig', kubeconfig, 'apply', '-f', '-'], datastores);
  must('kubectl', [
    '--kubeconfig',
    kubeconfig,
    '-n',
    NS,
    'rollout',
    'status',
    'deploy/postgres',
    'deploy/redis',
    'deploy/clickhouse',
    '--timeout=300s',
  ]);
  const installed = await helm([
    'upgrade',
    '--install',
    'obs',
    chartDir,
    '--kubeconfig',
    kubeconfig,
    '--namespace',
    'observatory-system',
    '--create-namespace',
    '--set',
    'image.tag=dev',
    '--set',
    `operator.watchNamespace=${NS}`,
    '--wait',
    '--timeout',
    '5m',
  ]);
  if (installed.code !== 0) throw new Error(`helm install failed: ${installed.stderr}`);

  const ch = createClient({ url: (await forward('svc/clickhouse', 8123)).url });
  const pg = (await forward('svc/postgres', 5432)).url.replace('http://', 'postgres://postgres:postgres@');
  let web: ChildProcess | undefined;
  const get = async (name: string) =>
    JSON.parse(
      must('kubectl', ['--kubeconfig', kubeconfig, '-n', NS, 'get', 'obsvc', name, '-o', 'json']),
    ) as Obsvc;
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
      must('kubectl', [
        '--kubeconfig',
        kubeconfig,
        '-n',
        NS,
        'wait',
        '--for=condition=Available',
        'deploy',
        '-l',
        'app.kubernetes.io/component=web',
        '--timeout=300s',
      ]);
      const f = await forward(
        'svc/' +
          JSON.parse(
            must('kubectl', [
              '--kubeconfig',
              kubeconfig,
              '-n',
              NS,
              'get',
              'svc',
              '-l',
              'app.kubernetes.io/component=web',
              '-o',
              'json',
            ]),
          ).items[0].metadata.name,
        3000,
      );
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

  const { project } = await createRelease3(p, 'kind');
  await sendTraffic(p, project, 'v3');
  const { steps } = await walkToEventsOnly(p, 'kind', project);
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
  for (const s of steps) console.log(`${(s.ms / 1000).toFixed(1).padStart(7)}s  ${s.name}`);
  console.log(
    `kind scenario passed in ${((performance.now() - started) / 1000).toFixed(0)}s (${JSON.stringify(moved)})`,
  );
}

try {
  await main();
} catch (err) {
  console.error(`test:kind failed: ${(err as Error).stack ?? err}`);
  process.exitCode = 1;
} finally {
  for (const f of forwards) f.kill();
  // The cluster stays for the next run (KIND_CLUSTER); `kind delete cluster --name ...` removes it.
}
