/**
 * Operator figure of `npm run bench`: how fast the operator turns a spec change into the updated
 * Deployment, and what memory it needs per ObservabilityService. A real API server (etcd and
 * kube-apiserver, `test/fixtures/api-server.ts`; no node is needed for Deployments to be written) and
 * the operator as its own process, as the chart runs it: its bundle operator/dist/operator.mjs
 * (scripts/build-operator.ts, built here when missing or stale), without leader election.
 *   - Latency: BENCH_OPERATOR_CHANGES (100) changes of `spec.web.replicas`, one at a time, each from
 *     the PATCH of the object to the Deployment seen with the new replicas through a watch, p50/p99;
 *     baseline: the same replicas PATCH sent straight to a Deployment the operator does not manage,
 *     seen through the same watch (the API server's own write-to-watch time); also the PATCH of an
 *     ObservabilityService in a namespace the operator does not watch (the API server's time for
 *     the kind, which the operator's figure includes before it hears of the change).
 *   - Where the time goes: the operator's reconcile time (its own histogram on /metrics, per change)
 *     and the moment the status write for the new generation reaches the watch.
 *   - RSS of the operator process (VmRSS) with 1, 10, 40 and 50 objects, each reconciled.
 *   - Growth from 1x to 4x: latency and RSS above one object at 10 and 40 objects.
 * The operator process runs with the NODE_OPTIONS and MALLOC_ARENA_MAX the chart ships
 * (`operator.nodeOptions`, `operator.mallocArenaMax` in the chart's values.yaml), so the figures are
 * those of the process a cluster runs;
 * BENCH_OPERATOR_NODE_OPTIONS adds to them (profiling).
 * The objects start as an operator leaves them after a finished pass (status Legacy on the image):
 * created paused, given that status, then resumed, since no Job can run without a node.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  AppsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  type KubeConfig,
  PatchStrategy,
  setHeaderOptions,
  type V1Deployment,
  Watch,
} from '@kubernetes/client-node';
import { parse } from 'yaml';
import { waitEstablished } from '../../cluster/crds.ts';
import { cliEnv } from '../../cluster/observatory-cli.ts';
import { GROUP, PLURAL, VERSION } from '../../operator/index.ts';
import { ensureOperatorBuilt, OPERATOR_BUNDLE } from '../../scripts/build-operator.ts';
import { startControlPlane } from '../fixtures/api-server.ts';
import { freePort } from '../fixtures/ports.ts';
import { type ManagedProcess, startProcess, waitUntilReady } from '../fixtures/processes.ts';
import { ROOT } from '../fixtures/service.ts';
import { line, quantile, ratio } from './report.ts';

const CHANGES = Number(process.env['BENCH_OPERATOR_CHANGES'] ?? 100);
const NS = 'bench';
/** Where an object lives that no operator reconciles (the API server's own time for the kind). */
const UNWATCHED = 'bench-unwatched';
const IMAGE = 'observatory:dev';
const WAIT_MS = 30_000;
const MERGE = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

const spec = (replicas: number) => ({
  release: '4',
  image: IMAGE,
  writeMode: 'Legacy',
  datastores: {
    postgres: { urlSecretRef: { name: 'db', key: 'url' } },
    clickhouse: { urlSecretRef: { name: 'db', key: 'clickhouse' } },
    redis: { urlSecretRef: { name: 'db', key: 'redis' } },
  },
  web: { replicas },
});

/** Every Deployment and object change in the namespace as it reaches a watch, with its arrival time. */
function watchNamespace(kc: KubeConfig, ns: string) {
  type Seen = { at: number; test: (o: Record<string, unknown>) => boolean; resolve: (t: number) => void };
  const waiting = new Map<string, Seen[]>();
  const last = new Map<string, Record<string, unknown>>();
  const controllers: AbortController[] = [];
  const deliver = (key: string, obj: Record<string, unknown>) => {
    const now = performance.now();
    last.set(key, obj);
    const list = waiting.get(key) ?? [];
    for (const w of list.filter((w) => w.test(obj))) {
      w.resolve(now);
      list.splice(list.indexOf(w), 1);
    }
  };
  let stopped = false;
  // A watch ends on errors and server timeouts (and at once while a new resource is not served
  // yet): it is started again, and what it missed meanwhile does not matter (waits are per change).
  const start = async (path: string, prefix: string): Promise<void> => {
    const restart = () => {
      if (!stopped) setTimeout(() => void start(path, prefix).catch(restart), 200);
    };
    controllers.push(
      await new Watch(kc).watch(
        path,
        {},
        (_type, obj: { metadata: { name: string } }) =>
          deliver(`${prefix}/${obj.metadata.name}`, obj as never),
        restart,
      ),
    );
  };
  return {
    ready: Promise.all([
      start(`/apis/apps/v1/namespaces/${ns}/deployments`, 'deployment'),
      start(`/apis/${GROUP}/${VERSION}/namespaces/${ns}/${PLURAL}`, 'object'),
    ]),
    /** Resolves with the arrival time of the first event of `key` that passes `test`. */
    until(key: string, test: (o: Record<string, unknown>) => boolean): Promise<number> {
      return new Promise((resolve, reject) => {
        const w: Seen = {
          at: performance.now(),
          test,
          resolve: (t) => {
            clearTimeout(timer);
            resolve(t);
          },
        };
        const timer = setTimeout(
          () =>
            reject(
              new Error(
                `${key}: not seen within ${WAIT_MS} ms; last seen ${JSON.stringify(last.get(key))?.slice(0, 1500)}`,
              ),
            ),
          WAIT_MS,
        );
        waiting.set(key, [...(waiting.get(key) ?? []), w]);
      });
    },
    stop: () => {
      stopped = true;
      for (const c of controllers) c.abort();
    },
  };
}

const replicasOf = (o: Record<string, unknown>) => (o as V1Deployment).spec?.replicas;
const observed = (o: Record<string, unknown>) =>
  (o as { status?: { observedGeneration?: number } }).status?.observedGeneration;
const generation = (o: Record<string, unknown>) =>
  (o as { metadata: { generation: number } }).metadata.generation;

/** The operator's process settings as the chart ships them (its values). */
function shippedProcess(): { nodeOptions: string; mallocArenaMax: number } {
  const values = parse(readFileSync(join(ROOT, 'charts/observatory/values.yaml'), 'utf8')) as {
    operator: { nodeOptions: string; mallocArenaMax: number };
  };
  return values.operator;
}

function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m![1]) / 1024;
}

/** The operator's reconcile histogram: count and sum of seconds. */
async function reconciles(metricsUrl: string): Promise<{ count: number; sum: number }> {
  const text = await (await fetch(metricsUrl)).text();
  let count = 0;
  let sum = 0;
  for (const l of text.split('\n')) {
    const m = /^(\w+)_(count|sum)\{[^}]*\} ([\d.e+-]+)$/.exec(l);
    if (!m || !m[1]!.includes('reconcile')) continue;
    if (m[2] === 'count') count += Number(m[3]);
    else sum += Number(m[3]);
  }
  return { count, sum };
}

interface Latency {
  p50: number;
  p99: number;
  status50: number;
  reconcileMs: number;
  reconcilesPerChange: number;
}

export async function benchOperator(): Promise<void> {
  const cp = await startControlPlane();
  let operator: ManagedProcess | undefined;
  const kc = cp.kubeconfig;
  const custom = kc.makeApiClient(CustomObjectsApi);
  const apps = kc.makeApiClient(AppsV1Api);
  let watches: ReturnType<typeof watchNamespace>[] = [];
  try {
    await waitEstablished(kc, [`${PLURAL}.${GROUP}`]);
    for (const name of [NS, UNWATCHED])
      await kc.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name } } });
    // Watched only once the resource and the namespace exist (a watch of an unknown path ends at once).
    const w = watchNamespace(kc, NS);
    const unwatched = watchNamespace(kc, UNWATCHED);
    watches = [w, unwatched];
    await Promise.all([w.ready, unwatched.ready]);
    const [healthPort, metricsPort] = [await freePort(), await freePort()];
    const shipped = shippedProcess();
    const nodeOptions = [shipped.nodeOptions, process.env['BENCH_OPERATOR_NODE_OPTIONS'] ?? '']
      .join(' ')
      .trim();
    await ensureOperatorBuilt();
    operator = startProcess('operator', process.execPath, [OPERATOR_BUNDLE], {
      env: cliEnv({
        KUBECONFIG: cp.kubeconfigPath,
        OPERATOR_LEADER_ELECTION: 'false',
        OPERATOR_WATCH_NAMESPACE: NS,
        OPERATOR_BIND_ADDRESS: '127.0.0.1',
        OPERATOR_HEALTH_PORT: String(healthPort),
        OPERATOR_METRICS_PORT: String(metricsPort),
        LOG_LEVEL: 'warn',
        NODE_OPTIONS: nodeOptions,
        MALLOC_ARENA_MAX: String(shipped.mallocArenaMax),
      }),
    });
    await waitUntilReady(operator, async () => (await fetch(`http://127.0.0.1:${healthPort}/readyz`)).ok, {
      timeoutMs: 60_000,
    });
    const metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
    const pid = operator.pid;

    let objects = 0;
    const replicas = new Map<string, number>();
    const addObjects = async (upTo: number) => {
      const names: string[] = [];
      for (; objects < upTo; objects++) names.push(`svc${objects}`);
      await Promise.all(
        names.map(async (name) => {
          await custom.createNamespacedCustomObject({
            group: GROUP,
            version: VERSION,
            plural: PLURAL,
            namespace: NS,
            body: {
              apiVersion: `${GROUP}/${VERSION}`,
              kind: 'ObservabilityService',
              metadata: { name },
              spec: { ...spec(1), paused: true },
            },
          });
          await custom.patchNamespacedCustomObjectStatus(
            {
              group: GROUP,
              version: VERSION,
              plural: PLURAL,
              namespace: NS,
              name,
              body: { status: { state: 'Legacy', deployedImage: IMAGE } },
            },
            MERGE,
          );
          const seen = w.until(`deployment/${name}-web`, (d) => replicasOf(d) === 1);
          await patchSpec(name, { paused: false });
          await seen;
          replicas.set(name, 1);
        }),
      );
    };
    const patchSpec = (name: string, body: object) =>
      custom.patchNamespacedCustomObject(
        { group: GROUP, version: VERSION, plural: PLURAL, namespace: NS, name, body: { spec: body } },
        MERGE,
      );
    const settledRss = async () => {
      // Let the reconciles and their garbage settle before reading the resident set.
      await new Promise((r) => setTimeout(r, 3_000));
      return rssMb(pid);
    };

    /** CHANGES replicas changes spread over the objects, one at a time. */
    const latency = async (): Promise<Latency> => {
      const total: number[] = [];
      const status: number[] = [];
      const before = await reconciles(metricsUrl);
      for (let i = 0; i < CHANGES; i++) {
        const name = `svc${i % objects}`;
        const want = replicas.get(name) === 1 ? 2 : 1;
        const deployment = w.until(`deployment/${name}-web`, (d) => replicasOf(d) === want);
        const statusWritten = w.until(
          `object/${name}`,
          (o) =>
            observed(o) !== undefined &&
            observed(o) === generation(o) &&
            o['spec'] !== undefined &&
            (o['spec'] as { web: { replicas: number } }).web.replicas === want,
        );
        const t = performance.now();
        await patchSpec(name, { web: { replicas: want } });
        const [d, st] = await Promise.all([deployment, statusWritten]);
        total.push(d - t);
        status.push(st - t);
        replicas.set(name, want);
      }
      const after = await reconciles(metricsUrl);
      const n = after.count - before.count;
      return {
        p50: quantile(total, 0.5),
        p99: quantile(total, 0.99),
        status50: quantile(status, 0.5),
        reconcileMs: n > 0 ? ((after.sum - before.sum) * 1000) / n : 0,
        reconcilesPerChange: n / CHANGES,
      };
    };

    // Baseline: the same change straight to a Deployment nobody manages, through the same watch.
    await apps.createNamespacedDeployment({
      namespace: NS,
      body: {
        metadata: { name: 'baseline' },
        spec: {
          replicas: 1,
          selector: { matchLabels: { app: 'baseline' } },
          template: {
            metadata: { labels: { app: 'baseline' } },
            spec: { containers: [{ name: 'c', image: IMAGE }] },
          },
        },
      },
    });
    const direct: number[] = [];
    for (let i = 0; i < CHANGES; i++) {
      const want = i % 2 === 0 ? 2 : 1;
      const seen = w.until('deployment/baseline', (d) => replicasOf(d) === want);
      const t = performance.now();
      await apps.patchNamespacedDeployment(
        { namespace: NS, name: 'baseline', body: { spec: { replicas: want } } },
        MERGE,
      );
      direct.push((await seen) - t);
    }
    const baseline = { p50: quantile(direct, 0.5), p99: quantile(direct, 0.99) };

    // The same change of an ObservabilityService nobody reconciles: what the API server alone takes
    // for this kind (validation of its schema and rules included) from PATCH to watch.
    await custom.createNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      plural: PLURAL,
      namespace: UNWATCHED,
      body: {
        apiVersion: `${GROUP}/${VERSION}`,
        kind: 'ObservabilityService',
        metadata: { name: 'baseline' },
        spec: spec(1),
      },
    });
    const objectDirect: number[] = [];
    for (let i = 0; i < CHANGES; i++) {
      const want = i % 2 === 0 ? 2 : 1;
      const seen = unwatched.until(
        'object/baseline',
        (o) => (o['spec'] as { web: { replicas: number } }).web.replicas === want,
      );
      const t = performance.now();
      await custom.patchNamespacedCustomObject(
        {
          group: GROUP,
          version: VERSION,
          plural: PLURAL,
          namespace: UNWATCHED,
          name: 'baseline',
          body: { spec: { web: { replicas: want } } },
        },
        MERGE,
      );
      objectDirect.push((await seen) - t);
    }
    const objectBaseline = { p50: quantile(objectDirect, 0.5), p99: quantile(objectDirect, 0.99) };

    const rss: [number, number][] = [];
    const lat: [number, Latency][] = [];
    for (const n of [1, 10, 40, 50]) {
      await addObjects(n);
      rss.push([n, await settledRss()]);
      if (n >= 10) lat.push([n, await latency()]);
    }

    process.stdout.write(
      `\nOperator: its bundle (operator/dist/operator.mjs) as one process on an API server alone (Kubernetes ${cp.version}, NODE_OPTIONS ${nodeOptions || '(none)'}, MALLOC_ARENA_MAX ${shipped.mallocArenaMax}), ${CHANGES} spec changes per figure\n\n`,
    );
    line(
      'replicas PATCH straight to a Deployment (baseline)',
      `p50 ${baseline.p50.toFixed(1)} ms, p99 ${baseline.p99.toFixed(1)} ms`,
    );
    line(
      'the same PATCH to an object nobody reconciles',
      `p50 ${objectBaseline.p50.toFixed(1)} ms, p99 ${objectBaseline.p99.toFixed(1)} ms`,
    );
    for (const [n, l] of lat) {
      line(
        `spec change to updated Deployment, ${n} objects`,
        `p50 ${l.p50.toFixed(1)} ms, p99 ${l.p99.toFixed(1)} ms (goal p99 < 200 ms)`,
      );
      line(
        '  ratio to the baseline p50, p99',
        `${ratio(l.p50, baseline.p50)}, ${ratio(l.p99, baseline.p99)}`,
      );
      line(
        '  reconcile time, reconciles per change',
        `${l.reconcileMs.toFixed(1)} ms, ${l.reconcilesPerChange.toFixed(2)}`,
      );
      line('  status for the new generation seen, p50', `${l.status50.toFixed(1)} ms`);
    }
    for (const [n, mb] of rss)
      line(`operator RSS with ${n} objects`, `${mb.toFixed(0)} MB${n === 50 ? ' (goal < 150 MB)' : ''}`);
    const at = (n: number) => rss.find(([k]) => k === n)![1];
    const l10 = lat.find(([n]) => n === 10)![1];
    const l40 = lat.find(([n]) => n === 40)![1];
    line(
      '  growth 10 -> 40 objects: latency p50, RSS above 1 object',
      `${ratio(l40.p50, l10.p50)}x, ${ratio(at(40) - at(1), Math.max(0.1, at(10) - at(1)))}x`,
    );
  } finally {
    for (const w of watches) w.stop();
    await operator?.kill('SIGTERM');
    await cp.stop();
  }
}
