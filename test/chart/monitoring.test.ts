// The chart's monitoring objects (PrometheusRule, PodMonitors, the Grafana dashboard ConfigMap):
// rendered by helm, validated by kubeconform and by a real API server against the Prometheus
// Operator's own CRDs, the rule file checked by Prometheus's rulefmt (as `promtool check rules`),
// every rule expression and dashboard query parsed by Prometheus's PromQL parser, and every metric
// they name found in the /metrics of a running operator (against an API server), worker and web
// (on real PostgreSQL, Redis and the ClickHouse engine).
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ApiextensionsV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../cluster/wait.ts';
import { ensureOperatorBuilt, OPERATOR_BUNDLE } from '../../scripts/build-operator.ts';
import { type ControlPlane, startControlPlane } from '../fixtures/api-server.ts';
import { freePort } from '../fixtures/ports.ts';
import { type PostgresFixture, startPostgres } from '../fixtures/postgres.ts';
import { type ManagedProcess, startProcess, waitUntilReady } from '../fixtures/processes.ts';
import { type RedisFixture, startRedis } from '../fixtures/redis.ts';
import {
  type AnalyticsServer,
  DUAL_ENV,
  type Env,
  startAnalyticsServer,
  startWeb,
  startWorker,
  type WebServer,
} from '../fixtures/service.ts';
import { chartDir } from '../tools/paths.ts';
import { ensurePrometheusOperatorCrds } from '../tools/prometheus-operator-crds.ts';
import { checkRules, parsePromql } from '../tools/promql.ts';
import { base } from '../unit/operator-walks.ts';
import {
  find,
  helm,
  kubeconform,
  type Manifest,
  parseManifests,
  releaseName,
  releaseNamespace,
  template,
} from './helm.ts';

const ON = {
  'monitoring.prometheusRule.enabled': true,
  'monitoring.podMonitors.enabled': true,
  'monitoring.dashboard.enabled': true,
};
const fullname = `${releaseName}-observatory`;

interface Rule {
  alert: string;
  expr: string;
  for?: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}
const rulesOf = (manifests: Manifest[]): Rule[] =>
  (find(manifests, 'PrometheusRule').spec.groups as { rules: Rule[] }[]).flatMap((g) => g.rules);

interface Dashboard {
  panels: { type: string; title: string; targets?: { expr: string }[] }[];
  templating: { list: { type: string; name: string; query?: { query: string } }[] };
}
const dashboardFile = join(chartDir, 'dashboards', 'observatory-migration.json');
const readDashboard = async () => JSON.parse(await readFile(dashboardFile, 'utf8')) as Dashboard;

/** Grafana's own macros, given the values Grafana would substitute before Prometheus sees the query. */
const GRAFANA_MACROS: Record<string, string> = { $__rate_interval: '2m', $__interval: '30s', $__range: '6h' };
function substituteMacros(expr: string): string {
  let out = expr;
  for (const [macro, value] of Object.entries(GRAFANA_MACROS)) out = out.replaceAll(macro, value);
  return out;
}

/** The PromQL of every panel target, and the series selector inside each label_values() variable. */
function dashboardQueries(dashboard: Dashboard): { where: string; expr: string }[] {
  const queries: { where: string; expr: string }[] = [];
  for (const panel of dashboard.panels)
    for (const target of panel.targets ?? [])
      queries.push({ where: `panel "${panel.title}"`, expr: substituteMacros(target.expr) });
  for (const variable of dashboard.templating.list) {
    if (variable.type !== 'query') continue;
    const selector = /^label_values\((.+), *[a-zA-Z_]+\)$/.exec(variable.query!.query);
    if (!selector) throw new Error(`variable ${variable.name}: not label_values(selector, label)`);
    queries.push({ where: `variable ${variable.name}`, expr: selector[1]! });
  }
  return queries;
}

describe('monitoring objects as rendered', () => {
  it('renders nothing by default', async () => {
    const kinds = parseManifests(await template()).map((m) => m.kind);
    expect(kinds).not.toContain('PrometheusRule');
    expect(kinds).not.toContain('PodMonitor');
    expect(kinds).not.toContain('ConfigMap');
  });

  it('renders the rule, the PodMonitors and the dashboard ConfigMap the sidecar loads, holding dashboards/*.json as is', async () => {
    const manifests = await parseManifests(
      await template({ ...ON, 'monitoring.labels': { release: 'kube-prometheus-stack' } }),
    );
    const rule = find(manifests, 'PrometheusRule');
    expect(rule.metadata).toMatchObject({
      name: `${fullname}-migration`,
      namespace: releaseNamespace,
      labels: { release: 'kube-prometheus-stack' },
    });
    const dashboard = find(manifests, 'ConfigMap', `${fullname}-dashboard`);
    expect(dashboard.metadata).toMatchObject({
      labels: { grafana_dashboard: '1', release: 'kube-prometheus-stack' },
    });
    expect(JSON.parse(dashboard.data['observatory-migration.json'])).toEqual(await readDashboard());
    const monitors = manifests.filter((m) => m.kind === 'PodMonitor');
    expect(monitors.map((m) => m.metadata.name).sort()).toEqual([
      `${fullname}-operator`,
      `${fullname}-service`,
    ]);
    const operator = find(manifests, 'PodMonitor', `${fullname}-operator`);
    // The operator's series carry each object's namespace; the target's must not overwrite it.
    expect(operator.spec.podMetricsEndpoints).toEqual([
      { port: 'metrics', path: '/metrics', interval: '30s', honorLabels: true },
    ]);
    expect(operator.spec.selector.matchLabels).toEqual(
      find(manifests, 'Deployment').spec.selector.matchLabels,
    );
    const service = find(manifests, 'PodMonitor', `${fullname}-service`);
    expect(service.spec).toMatchObject({
      namespaceSelector: { matchNames: [releaseNamespace] },
      selector: { matchLabels: { 'app.kubernetes.io/managed-by': 'observatory-operator' } },
    });
    expect(service.spec.podMetricsEndpoints).toEqual([
      { port: 'metrics', path: '/metrics', interval: '30s' },
      {
        port: 'http',
        path: '/metrics',
        interval: '30s',
        relabelings: [
          {
            sourceLabels: ['__meta_kubernetes_pod_label_app_kubernetes_io_component'],
            regex: 'worker',
            action: 'keep',
          },
        ],
      },
    ]);
    const clusterWide = find(
      parseManifests(await template({ ...ON, 'rbac.clusterWide': true })),
      'PodMonitor',
      `${fullname}-service`,
    );
    expect(clusterWide.spec.namespaceSelector).toEqual({ any: true });
  });

  it('takes thresholds, severities and labels from values', async () => {
    const rules = rulesOf(
      parseManifests(
        await template({
          ...ON,
          'monitoring.prometheusRule.thresholds.propagationStuckMinutes': 30,
          'monitoring.prometheusRule.thresholds.cutoverBlockedMinutes': 90,
          'monitoring.prometheusRule.thresholds.reconcileErrors': 7,
          'monitoring.prometheusRule.thresholds.operatorDownFor': '3m',
          'monitoring.prometheusRule.severity.critical': 'page',
          'monitoring.prometheusRule.alertLabels': { team: 'platform' },
          'monitoring.prometheusRule.runbookUrl': 'https://docs.example.com/runbook',
        }),
      ),
    );
    const rule = (name: string) => rules.find((r) => r.alert === name)!;
    expect(rule('ObservatoryPropagationStuck').expr).toMatch(/ > 1800$/);
    expect(rule('ObservatoryCutoverBlocked').expr).toMatch(/ > 5400$/);
    expect(rule('ObservatoryReconcileErrors').expr).toMatch(/ >= 7$/);
    expect(rule('ObservatoryOperatorDown').for).toBe('3m');
    expect(rule('ObservatoryOperatorDown').labels).toEqual({ severity: 'page', team: 'platform' });
    expect(rule('ObservatoryCutoverBlocked').labels).toEqual({ severity: 'warning', team: 'platform' });
    expect(rule('ObservatoryBackfillStepFailed').annotations['runbook_url']).toBe(
      'https://docs.example.com/runbook#observatorybackfillstepfailed',
    );
  });

  it('refuses bad monitoring values through the values schema, naming the key', async () => {
    for (const [key, value, where] of [
      [
        'monitoring.prometheusRule.thresholds.cutoverBlockedMinutes',
        0,
        /at '\/monitoring\/prometheusRule\/thresholds\/cutoverBlockedMinutes'/,
      ],
      [
        'monitoring.prometheusRule.thresholds.operatorDownFor',
        'ten minutes',
        /at '\/monitoring\/prometheusRule\/thresholds\/operatorDownFor'/,
      ],
      ['monitoring.podMonitors.intervall', '30s', /at '\/monitoring\/podMonitors'.*'intervall' not allowed/],
    ] as const)
      await expect(template({ [key]: value }), key).rejects.toThrow(where);
  });

  it('passes kubeconform -strict with the Prometheus Operator CRDs, whose schemas refuse a misspelt field', async () => {
    const crdDir = await ensurePrometheusOperatorCrds();
    const crds = await Promise.all(
      ['monitoring.coreos.com_prometheusrules.yaml', 'monitoring.coreos.com_podmonitors.yaml'].map((f) =>
        readFile(join(crdDir, f), 'utf8'),
      ),
    );
    const rendered = await template(ON);
    const report = await kubeconform(rendered, crds);
    expect(report.resources.filter((r) => r.status !== 'statusValid')).toEqual([]);
    expect(report.code).toBe(0);
    expect(report.summary.skipped).toBe(0);
    expect(
      report.resources.filter((r) => r.kind === 'PodMonitor' || r.kind === 'PrometheusRule'),
    ).toHaveLength(3);

    const misspelt = await kubeconform(rendered.replace('podMetricsEndpoints:', 'podMetricEndpoints:'), crds);
    expect(misspelt.resources.filter((r) => r.status === 'statusInvalid').map((r) => r.kind)).toContain(
      'PodMonitor',
    );
  });
});

describe("Prometheus's own checks", () => {
  it('the rule groups pass rulefmt (promtool check rules: expressions, durations, labels, templates), which has teeth', async () => {
    const rule = find(parseManifests(await template(ON)), 'PrometheusRule');
    expect(await checkRules(rule.spec)).toEqual([]);
    const broken = async (change: (rules: Rule[]) => void) => {
      const spec = structuredClone(rule.spec) as { groups: { rules: Rule[] }[] };
      change(spec.groups[0]!.rules);
      return (await checkRules(spec)).join('\n');
    };
    expect(
      await broken((r) => {
        r[0]!.expr = 'sum by (namespace (observatory_operator_leader)';
      }),
    ).toMatch(/ObservatoryOperatorDown.*parse error/);
    expect(
      await broken((r) => {
        r[1]!.annotations['summary'] = '{{ $labels.namespace }';
      }),
    ).toMatch(/ObservatoryOperatorNoLeader.*annotation "summary": template/);
    expect(
      await broken((r) => {
        r[2]!.for = 'fifteen minutes';
      }),
    ).toMatch(/not a valid duration string: "fifteen minutes"/);
  });

  it('each alert has a severity, summary, description and a runbook_url into a section of docs/runbook.md', async () => {
    const rules = rulesOf(parseManifests(await template(ON)));
    const runbook = await readFile(join(chartDir, 'docs', 'runbook.md'), 'utf8');
    const sections = [...runbook.matchAll(/^## (\S+)$/gm)].map((m) => m[1]!.toLowerCase());
    expect(rules.map((r) => r.alert).sort()).toEqual([
      'ObservatoryBackfillStepFailed',
      'ObservatoryBackupOverdue',
      'ObservatoryCutoverBlocked',
      'ObservatoryIngestionBacklog',
      'ObservatoryIngestionRefused',
      'ObservatoryMigrationStalled',
      'ObservatoryOperatorDown',
      'ObservatoryOperatorNoLeader',
      'ObservatoryPropagationLagging',
      'ObservatoryPropagationStuck',
      'ObservatoryPropagationUnhealthy',
      'ObservatoryReconcileErrors',
    ]);
    for (const r of rules) {
      expect(Object.keys(r.labels), r.alert).toContain('severity');
      expect(r.annotations['summary'], r.alert).toBeTruthy();
      expect(r.annotations['description'], r.alert).toBeTruthy();
      const [file, anchor] = r.annotations['runbook_url']!.split('#');
      expect(file).toBe('charts/observatory/docs/runbook.md');
      expect(sections, r.alert).toContain(anchor);
      expect(anchor).toBe(r.alert.toLowerCase());
    }
  });

  it('every dashboard query and variable selector parses with PromQL, after only the Grafana macros are substituted', async () => {
    const queries = dashboardQueries(await readDashboard());
    expect(queries.length).toBeGreaterThan(20);
    for (const q of queries) expect(q.expr, q.where).not.toMatch(/\$__/);
    const verdicts = await parsePromql(queries.map((q) => q.expr));
    expect(verdicts.flatMap((v, i) => (v.error ? [`${queries[i]!.where}: ${v.error}`] : []))).toEqual([]);
    expect((await parsePromql(['rate(x[5m]', 'sum(rate(x[$__rate_interval]))']))[0]!.error).toMatch(
      /parse error/,
    );
  });
});

/** Metric names a Prometheus exposition offers: each family's name, with a histogram's or summary's series. */
function exportedNames(exposition: string): Set<string> {
  const names = new Set<string>();
  for (const [, name, type] of exposition.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    names.add(name!);
    if (type === 'histogram') for (const s of ['_bucket', '_sum', '_count']) names.add(`${name}${s}`);
    if (type === 'summary') for (const s of ['_sum', '_count']) names.add(`${name}${s}`);
  }
  return names;
}

describe('every metric the rules and the dashboard name is exported by a running process', () => {
  let cluster: ControlPlane | undefined;
  let pgf: PostgresFixture | undefined;
  let redisf: RedisFixture | undefined;
  let ch: AnalyticsServer | undefined;
  let web: WebServer | undefined;
  let worker: WebServer | undefined;
  let operator: ManagedProcess | undefined;
  let operatorMetricsUrl: string;
  let webMetricsUrl: string;

  beforeAll(async () => {
    const promCrds = await ensurePrometheusOperatorCrds();
    // Datastores and the API server side by side; the chart brings its own CRD.
    [cluster, pgf, redisf, ch] = await Promise.all([
      startControlPlane({ crdDirs: [promCrds] }),
      startPostgres(),
      startRedis(),
      startAnalyticsServer(),
    ]);
    const stores: Env = { DATABASE_URL: pgf.url, CLICKHOUSE_URL: ch.url, REDIS_URL: redisf.url };
    // As the operator runs it: /metrics on a port of its own.
    const webMetricsPort = await freePort();
    webMetricsUrl = `http://127.0.0.1:${webMetricsPort}/metrics`;
    web = await startWeb({ ...stores, ...DUAL_ENV, METRICS_PORT: String(webMetricsPort) });
    worker = await startWorker({
      ...stores,
      ...DUAL_ENV,
      SERVICE_EVENT_PROPAGATION_INTERVAL_SECONDS: '1',
      SERVICE_BACKGROUND_MIGRATIONS_IN_WORKER: 'false',
    });

    const install = await helm([
      'install',
      releaseName,
      chartDir,
      '--namespace',
      releaseNamespace,
      '--create-namespace',
      '--kubeconfig',
      cluster.kubeconfigPath,
      ...Object.entries(ON).flatMap(([k, v]) => ['--set', `${k}=${v}`]),
    ]);
    expect(install.stderr.replace(/^WARNING: .*\n/gm, '')).toBe('');
    expect(install.code).toBe(0);
    const crds = cluster.kubeconfig.makeApiClient(ApiextensionsV1Api);
    await waitFor('the ObservabilityService CRD established', async () =>
      (
        await crds.readCustomResourceDefinition({ name: 'observabilityservices.observatory.dev' })
      ).status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True'),
    );

    const [metricsPort, healthPort] = [await freePort(), await freePort()];
    operatorMetricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
    // The operator as the chart runs it (its bundle), so the metrics checked are the shipped process's.
    await ensureOperatorBuilt();
    operator = startProcess('operator', process.execPath, [OPERATOR_BUNDLE], {
      env: {
        PATH: process.env['PATH'],
        HOME: process.env['HOME'],
        KUBECONFIG: cluster.kubeconfigPath,
        LOG_LEVEL: 'warn',
        OPERATOR_NAMESPACE: releaseNamespace,
        OPERATOR_WATCH_NAMESPACE: '',
        OPERATOR_BIND_ADDRESS: '127.0.0.1',
        OPERATOR_METRICS_PORT: String(metricsPort),
        OPERATOR_HEALTH_PORT: String(healthPort),
      },
    });
    await waitUntilReady(operator, async () => (await fetch(`http://127.0.0.1:${healthPort}/readyz`)).ok, {
      timeoutMs: 60_000,
    });
    await cluster.kubeconfig.makeApiClient(CustomObjectsApi).createNamespacedCustomObject({
      group: 'observatory.dev',
      version: 'v1alpha1',
      namespace: releaseNamespace,
      plural: 'observabilityservices',
      body: {
        apiVersion: 'observatory.dev/v1alpha1',
        kind: 'ObservabilityService',
        metadata: { name: 'obs' },
        spec: { ...base, release: '4', writeMode: 'Dual' },
      },
    });
  }, 600_000);

  afterAll(async () => {
    await operator?.kill('SIGTERM');
    await Promise.all([web?.stop(), worker?.stop()]);
    await Promise.all([cluster?.stop(), ch?.stop(), pgf?.stop(), redisf?.stop()]);
  });

  it('the API server accepted the PrometheusRule and the PodMonitors (the Prometheus Operator CRDs’ schemas)', async () => {
    const objects = cluster!.kubeconfig.makeApiClient(CustomObjectsApi);
    const list = async (plural: string) =>
      (
        (await objects.listNamespacedCustomObject({
          group: 'monitoring.coreos.com',
          version: 'v1',
          namespace: releaseNamespace,
          plural,
        })) as { items: Manifest[] }
      ).items.map((o) => o.metadata.name);
    expect(await list('prometheusrules')).toEqual([`${fullname}-migration`]);
    expect((await list('podmonitors')).sort()).toEqual([`${fullname}-operator`, `${fullname}-service`]);
  });

  it('the operator exports the per-object series of a reconciled object', async () => {
    const text = await waitFor(
      'the operator to export the series of obs',
      async () => {
        const body = await (await fetch(operatorMetricsUrl)).text();
        return (
          body.includes(`observatory_service_condition{namespace="${releaseNamespace}",name="obs"`) && body
        );
      },
      { timeoutMs: 60_000 },
    );
    expect(text).toMatch(/^observatory_operator_leader 1$/m);
    expect(text).toMatch(/^observatory_backfill_steps_completed\{namespace="[^"]+",name="obs"\} 0$/m);
  });

  it('the web labels requests by route pattern, never by the raw URL', async () => {
    await fetch(`${web!.url}/api/public/traces/trace-id-in-the-url`);
    const text = await (await fetch(webMetricsUrl)).text();
    const lines = text.split('\n').filter((l) => l.startsWith('observatory_web_http_requests_total{'));
    expect(lines.some((l) => l.includes('route="/api/public/traces/:'))).toBe(true);
    expect(text).not.toContain('trace-id-in-the-url');
  });

  it('the web serves /metrics on its metrics port only, never on the API port', async () => {
    // The API port answers /metrics with the UI's page (its client-side not-found), no exposition.
    const onApiPort = await fetch(`${web!.url}/metrics`);
    expect(onApiPort.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await onApiPort.text()).not.toContain('observatory_web_http_requests_total');
    const onMetricsPort = await fetch(webMetricsUrl);
    expect(onMetricsPort.status).toBe(200);
    expect(await onMetricsPort.text()).toContain('observatory_web_http_requests_total');
    expect((await fetch(webMetricsUrl.replace('/metrics', '/api/public/health'))).status).toBe(404);
  });

  it('names only metrics the operator, worker and web export', async () => {
    const expositions = await Promise.all(
      [operatorMetricsUrl, `${worker!.url}/metrics`, webMetricsUrl].map(async (url) => {
        const res = await fetch(url);
        expect(res.status, url).toBe(200);
        return res.text();
      }),
    );
    const exported = new Set(expositions.flatMap((t) => [...exportedNames(t)]));
    const rules = rulesOf(parseManifests(await template(ON)));
    const queries = [
      ...rules.map((r) => ({ where: `alert ${r.alert}`, expr: r.expr })),
      ...dashboardQueries(await readDashboard()),
    ];
    const verdicts = await parsePromql(queries.map((q) => q.expr));
    const named = verdicts.flatMap((v, i) => (v.metrics ?? []).map((m) => ({ where: queries[i]!.where, m })));
    expect(named.length).toBeGreaterThan(queries.length - 1);
    expect(named.filter(({ m }) => !exported.has(m)).map(({ where, m }) => `${where}: ${m}`)).toEqual([]);
    // Each process contributes what it alone exports.
    for (const [i, prefix] of [
      [0, 'observatory_operator_'],
      [1, 'observatory_event_propagation_'],
      [2, 'observatory_web_'],
    ] as const)
      expect(
        [...exportedNames(expositions[i]!)].some((n) => n.startsWith(prefix)),
        prefix,
      ).toBe(true);
  });
});
