/**
 * Rollback before the point of no return, with the operator installed from the chart: a deployment
 * in Dual goes back to release 3. The
 * operator rewinds the analytics schema to 37 with a Job, then deploys release 3, whose pods start
 * on the rewound schema; everything written in Legacy and Dual is still readable there.
 */
import { Langfuse } from 'langfuse';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalDeployment } from '../../cluster/scenario/local-deployment.ts';
import { DATASTORES, isTrue } from '../../cluster/scenario/scenario.ts';
import { localCluster } from '../cluster/testing.ts';
import { cli } from '../fixtures/service.ts';

const NAME = 'back';
let d: LocalDeployment;
let project: { publicKey: string; secretKey: string };

function apply(spec: Record<string, unknown>) {
  const r = d.apply({
    apiVersion: 'observatory.dev/v1alpha1',
    kind: 'ObservabilityService',
    metadata: { name: NAME, namespace: 'rb' },
    spec: {
      image: 'observatory:dev',
      datastores: DATASTORES,
      web: { replicas: 1 },
      worker: { replicas: 1 },
      ...spec,
    },
  });
  expect(r.code, r.stderr).toBe(0);
}

async function send(tag: string): Promise<string> {
  const sdk = new Langfuse({ ...project, baseUrl: await d.webUrl() });
  const trace = sdk.trace({ id: `rb-${tag}`, name: `trace-${tag}` });
  trace.span({ name: 'work' }).end();
  await sdk.shutdownAsync();
  return `rb-${tag}`;
}

async function schemaVersion(): Promise<number> {
  const r = await cli(['migrate', 'status', '--json'], { DATABASE_URL: d.pg.url, CLICKHOUSE_URL: d.ch.url });
  return (JSON.parse(r.stdout) as { analytics: { version: number } }).analytics.version;
}

beforeAll(async () => {
  d = await LocalDeployment.start(localCluster(), 'rb');
  await d.installChart();
});
afterAll(async () => {
  await d?.stop();
});

describe('rollback from Dual to release 3', () => {
  it('walks release 3 -> Legacy -> Dual with traffic at each step', async () => {
    apply({ release: '3' });
    await d.waitFor(NAME, 'Release3', (x) => x.status?.state === 'Release3' && isTrue(x, 'Ready'));
    const created = await cli(['create-project', '--name', 'rb', '--json'], {
      DATABASE_URL: d.pg.url,
      SERVICE_RELEASE: '3',
    });
    project = JSON.parse(created.stdout);
    apply({ release: '4', writeMode: 'Legacy', upgrade: { backupConfirmed: true } });
    await d.waitFor(NAME, 'Legacy', (x) => x.status?.state === 'Legacy' && isTrue(x, 'Ready'));
    await send('legacy');
    apply({
      release: '4',
      writeMode: 'Dual',
      backfill: { enabled: false },
      upgrade: { backupConfirmed: true },
    });
    await d.waitFor(NAME, 'Dual', (x) => x.status?.state === 'Dual' && isTrue(x, 'Ready'));
    await send('dual');
    expect(await schemaVersion()).toBe(46);
  });

  it('rewinds the schema to 37 with a Job, deploys release 3, and keeps what was written', async () => {
    apply({ release: '3', upgrade: { backupConfirmed: true } });
    const o = await d.waitFor(
      NAME,
      'Release3 again',
      (x) => x.status?.state === 'Release3' && isTrue(x, 'Ready'),
    );
    expect(o.status?.observedGeneration).toBe(o.metadata.generation);
    expect(await schemaVersion()).toBe(37);
    const jobs = d.kubectl(['get', 'jobs', '-n', 'rb', '-o', 'jsonpath={.items[*].metadata.name}']).stdout;
    expect(jobs).toMatch(/back-rollback-/);
    const deployment = JSON.parse(
      d.kubectl(['get', 'deploy', `${NAME}-web`, '-n', 'rb', '-o', 'json']).stdout,
    );
    const env = deployment.spec.template.spec.containers[0].env as { name: string; value?: string }[];
    expect(env.find((e) => e.name === 'SERVICE_RELEASE')?.value).toBe('3');
    expect(env.some((e) => e.name === 'SERVICE_MIGRATION_V4_WRITE_MODE')).toBe(false);

    const web = await d.webUrl();
    const auth = `Basic ${Buffer.from(`${project.publicKey}:${project.secretKey}`).toString('base64')}`;
    for (const id of ['rb-legacy', 'rb-dual']) {
      const res = await fetch(`${web}/api/public/traces/${id}`, {
        headers: { authorization: auth },
      });
      expect(res.status, id).toBe(200);
      const trace = (await res.json()) as { id: string; observations: unknown[] };
      expect(trace.id).toBe(id);
      expect(trace.observations.length).toBe(1);
    }
    // The operator Pod's own endpoints (chart ports) report the object's state.
    const operatorIP = (await d.operatorPods())[0]?.status?.podIP;
    expect((await fetch(`http://${operatorIP}:8081/healthz`)).status).toBe(200);
    expect((await fetch(`http://${operatorIP}:8081/readyz`)).status).toBe(200);
    const text = await (await fetch(`http://${operatorIP}:8080/metrics`)).text();
    expect(text).toMatch(/observatory_service_state\{namespace="rb",name="back",state="Release3"\} 1/);
    expect(text).toMatch(/observatory_operator_reconcile_duration_seconds_count\{result="ok"\} [1-9]/);
    // Release 3 keeps ingesting into the legacy tables.
    const id = await send('after-rollback');
    const res = await fetch(`${web}/api/public/traces/${id}`, {
      headers: { authorization: auth },
    });
    expect(res.status).toBe(200);
  });
});
