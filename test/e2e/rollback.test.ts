/**
 * Rollback before the point of no return, with the operator installed from the chart: a deployment
 * in Dual goes back to release 3. The
 * operator rewinds the analytics schema to 37 with a Job, then deploys release 3, whose pods start
 * on the rewound schema; everything written in Legacy and Dual is still readable there.
 *
 * With spec.backup pointing at a real S3 server, the operator backs both databases up before the
 * schema move to release 4 (no backupConfirmed), records it, and restores it after the rollback:
 * every row of the release 3 data comes back and what Legacy and Dual wrote is gone, which the
 * schema rewind cannot do. A backup Job killed mid-way is recorded failed, never complete. Then
 * a schedule inside a maintenance window takes backups and its retention deletes the older ones
 * from the bucket, and a verification restores the latest into scratch databases: it passes, and
 * names the table once one of the backup's objects is corrupted.
 */
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { Langfuse } from 'langfuse';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { S3_REGION, type S3Server, startS3Server } from '../../cluster/datastores/s3.ts';
import { LocalDeployment } from '../../cluster/scenario/local-deployment.ts';
import { DATASTORES, isTrue, type Obsvc } from '../../cluster/scenario/scenario.ts';
import { waitFor } from '../../cluster/wait.ts';
import type { ObservabilityServiceStatus } from '../../operator/api/v1alpha1.ts';
import { localCluster } from '../cluster/testing.ts';
import { cli } from '../fixtures/service.ts';

const NAME = 'back';
const BUCKET = 'backups';
const PREFIX = 'rb/';
let d: LocalDeployment;
let s3: S3Server;
let project: { publicKey: string; secretKey: string };
/** Every row of the release 3 data, read before the upgrade. */
let release3Rows: Record<string, string[]>;
let release4Backup: string;

/** The destination: the S3 server on the node's address, which the Jobs' Pods and ClickHouse both reach. */
const backup = () => ({
  destination: {
    bucket: BUCKET,
    prefix: PREFIX,
    region: S3_REGION,
    endpoint: s3.endpoint,
    forcePathStyle: true,
    accessKeyIdSecretRef: { name: 'backup-s3', key: 'accessKeyId' },
    secretAccessKeySecretRef: { name: 'backup-s3', key: 'secretAccessKey' },
  },
});

type Status = ObservabilityServiceStatus;
const statusOf = (o: Obsvc) => (o.status ?? {}) as Status;

/** Each table's rows, as sorted JSON lines: the analytics tables with traces, the relational ones with projects. */
async function release3Data(): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const table of ['traces', 'observations', 'scores']) {
    const rs = await d.ch.client.query({ query: `SELECT * FROM ${table}`, format: 'JSONEachRow' });
    out[`analytics.${table}`] = (await rs.json<Record<string, unknown>>())
      .map((r) => JSON.stringify(r))
      .sort();
  }
  const client = new pg.Client({ connectionString: d.pg.url });
  await client.connect();
  try {
    for (const table of ['projects', 'api_keys']) {
      const { rows } = await client.query(`SELECT * FROM ${table}`);
      out[`relational.${table}`] = rows.map((r) => JSON.stringify(r)).sort();
    }
  } finally {
    await client.end();
  }
  return out;
}

/** `kubectl annotate --overwrite`, as `kubectl observatory backup|restore` would set it. */
function annotate(annotation: string, value: string): void {
  const r = d.kubectl(['annotate', 'obsvc', NAME, '-n', 'rb', '--overwrite', `${annotation}=${value}`]);
  expect(r.code, r.stderr).toBe(0);
}

async function getObject(key: string): Promise<Buffer> {
  const r = await s3.client.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }));
  return Buffer.from(await r.Body!.transformToByteArray());
}

async function keysUnder(prefix: string): Promise<string[]> {
  const r = await s3.client.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: prefix }));
  return (r.Contents ?? []).map((o) => o.Key!);
}

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
      backup: backup(),
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
  s3 = await startS3Server(() => {}, { host: d.cluster.nodeIP });
  await s3.createBucket(BUCKET);
  await d.core().createNamespacedSecret({
    namespace: 'rb',
    body: {
      metadata: { name: 'backup-s3' },
      stringData: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
    },
  });
  await d.installChart();
});
afterAll(async () => {
  try {
    await d?.stop();
  } finally {
    await s3?.stop();
  }
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
    await send('v3');
    release3Rows = await waitFor(
      'the release 3 trace in the analytics store',
      async () => {
        const rows = await release3Data();
        return rows['analytics.traces']!.some((r) => r.includes('"rb-v3"')) ? rows : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 1_000 },
    );
    // No backupConfirmed: spec.backup makes the operator take the backup before the schema move.
    apply({ release: '4', writeMode: 'Legacy' });
    const legacy = await d.waitFor(NAME, 'Legacy', (x) => x.status?.state === 'Legacy' && isTrue(x, 'Ready'));
    const [taken] = statusOf(legacy).backups ?? [];
    expect(taken).toMatchObject({
      trigger: 'Release4',
      result: 'Complete',
      release: '3',
      writeMode: 'Legacy',
    });
    expect(taken!.id).toMatch(/^release4-/);
    expect(taken!.parts?.map((x) => x.part).sort()).toEqual(['analytics', 'relational']);
    expect(taken!.bytes).toBeGreaterThan(0);
    release4Backup = taken!.id;
    expect(await keysUnder(`${PREFIX}${release4Backup}/manifest.json`)).toHaveLength(1);
    // The backup finished before the schema Job of the move was created.
    const jobs = JSON.parse(d.kubectl(['get', 'jobs', '-n', 'rb', '-o', 'json']).stdout).items as {
      metadata: { name: string; creationTimestamp: string };
      status: { completionTime?: string };
    }[];
    const backupJob = jobs.find((j) => j.metadata.name === taken!.job)!;
    // The schema Jobs created since the backup's own (release 3 had its first one before).
    const migrate = jobs.filter(
      (j) =>
        /^back-migrate-/.test(j.metadata.name) &&
        Date.parse(j.metadata.creationTimestamp) >= Date.parse(backupJob.metadata.creationTimestamp),
    );
    expect(migrate.length).toBeGreaterThan(0);
    for (const m of migrate)
      expect(Date.parse(m.metadata.creationTimestamp)).toBeGreaterThanOrEqual(
        Date.parse(backupJob.status.completionTime!) - 1_000,
      );
    const record = d.kubectl([
      'get',
      'cm',
      '-n',
      'rb',
      '-l',
      `observatory.dev/backup-id=${release4Backup}`,
      '-o',
      'json',
    ]);
    expect(JSON.parse(record.stdout).items).toHaveLength(1);
    await send('legacy');
    apply({
      release: '4',
      writeMode: 'Dual',
      backfill: { enabled: false },
    });
    await d.waitFor(NAME, 'Dual', (x) => x.status?.state === 'Dual' && isTrue(x, 'Ready'));
    await send('dual');
    expect(await schemaVersion()).toBe(47);
  });

  it('rewinds the schema to 37 with a Job, deploys release 3, and keeps what was written', async () => {
    apply({ release: '3' });
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

  it('a backup Job killed mid-way is recorded failed and leaves no manifest', async () => {
    const id = 'killed-1';
    // The Job cannot finish before the kill: its pg_dump waits for a table this test holds locked
    // (a small backup would otherwise race the kill).
    const hold = new pg.Client({ connectionString: d.pg.url });
    await hold.connect();
    try {
      await hold.query('CREATE TABLE IF NOT EXISTS backup_hold (x int)');
      // A backend waiting on a lock notices its client's death only if it checks the socket.
      await hold.query(CHECK_CLIENT('200ms'));
      await hold.query('BEGIN');
      await hold.query('LOCK TABLE backup_hold IN ACCESS EXCLUSIVE MODE');
      annotate('observatory.dev/backup-requested', id);
      const pod = await waitFor(
        'a Pod of the requested backup Job',
        async () => {
          const r = d.kubectl([
            'get',
            'pods',
            '-n',
            'rb',
            '-l',
            'app.kubernetes.io/component=backup',
            '-o',
            'json',
          ]);
          const pods = JSON.parse(r.stdout).items as {
            metadata: { name: string };
            status: { phase?: string };
          }[];
          // The backup before the move has long succeeded; the requested one is the Pod still going.
          return pods.find((p) => p.status.phase !== 'Succeeded' && p.status.phase !== 'Failed')?.metadata
            .name;
        },
        { timeoutMs: 60_000, intervalMs: 200 },
      );
      // Mid-way means its dump is waiting on the held table.
      await waitFor(
        'the backup waiting on the held table',
        async () => ((await waiters(hold)) > 0 ? true : undefined),
        {
          timeoutMs: 60_000,
          intervalMs: 200,
        },
      );
      const killed = d.kubectl(['delete', 'pod', pod, '-n', 'rb', '--grace-period=0', '--force']);
      expect(killed.code, killed.stderr).toBe(0);
      // A forced delete removes the Pod object at once; its container dies a little later. The
      // table is released only once the dump's connection is gone, or the dump could still finish.
      await waitFor('the killed dump gone', async () => ((await waiters(hold)) === 0 ? true : undefined), {
        timeoutMs: 60_000,
        intervalMs: 200,
      });
    } finally {
      await hold.query('ROLLBACK').catch(() => {});
      await hold.query('DROP TABLE IF EXISTS backup_hold').catch(() => {});
      await hold.query(CHECK_CLIENT('0')).catch(() => {});
      await hold.end();
    }
    const o = await d.waitFor(NAME, 'the killed backup recorded', (x) =>
      (statusOf(x).backups ?? []).some((b) => b.id === id),
    );
    const record = statusOf(o).backups!.find((b) => b.id === id)!;
    expect(record.result).toBe('Failed');
    expect(record.parts).toBeUndefined();
    expect(await keysUnder(`${PREFIX}${id}/manifest.json`)).toEqual([]);
    // The deployment itself goes on: a requested backup never holds it.
    expect(statusOf(o).state).toBe('Release3');
  });

  it('restores the backup taken before the move: every release 3 row back, what Legacy and Dual wrote gone', async () => {
    expect((await release3Data())['analytics.traces']!.some((r) => r.includes('"rb-dual"'))).toBe(true);
    annotate('observatory.dev/restore-requested', release4Backup);
    const scaledDown = await d.waitFor(NAME, 'web and worker at zero for the restore', (x) =>
      ['Restoring', 'Complete'].includes(statusOf(x).restore?.phase ?? ''),
    );
    expect(statusOf(scaledDown).restore?.backupId).toBe(release4Backup);
    const o = await d.waitFor(
      NAME,
      'restored and Ready',
      (x) => statusOf(x).restore?.phase === 'Complete' && isTrue(x, 'Ready'),
      600_000,
    );
    expect(statusOf(o)).toMatchObject({
      state: 'Release3',
      restore: { backupId: release4Backup, release: '3', writeMode: 'Legacy' },
    });
    expect(o.status?.conditions?.find((c) => c.type === 'Restored')?.status).toBe('True');
    expect(await release3Data()).toEqual(release3Rows);
    expect(await schemaVersion()).toBe(37);
  });

  it('takes scheduled backups only inside the maintenance window, and the retention keeps the newest two', async () => {
    // Due every 20 s; the window is the first 30 s of each minute, so a time at :40 is never taken
    // (the next window takes the latest due time, :00).
    apply({
      release: '3',
      backup: { ...backup(), schedule: '*/20 * * * * *', retention: { keepLast: 2 } },
      maintenanceWindows: [{ cron: '0 * * * * *', duration: '30s' }],
    });
    const scheduled = (x: Obsvc) =>
      (statusOf(x).backups ?? []).filter((b) => b.trigger === 'Scheduled' && b.result === 'Complete');
    // The second scheduled backup makes three complete ones: its prune deletes the oldest.
    const o = await d.waitFor(
      NAME,
      'two scheduled backups, pruned after the second',
      (x) => {
        const [newest, second] = scheduled(x);
        const prune = statusOf(x).backupSchedule?.prune;
        return second !== undefined && prune?.after === newest!.id && prune.result !== undefined;
      },
      420_000,
    );
    const schedule = statusOf(o).backupSchedule!;
    expect(schedule.prune).toMatchObject({ result: 'Succeeded' });
    expect(schedule.kept).toBe(2);
    const taken = scheduled(o);
    for (const b of taken) {
      // The id carries the scheduled time: a window's :00 or :20, never :40.
      expect(b.id, b.id).toMatch(/^scheduled-\d{8}t\d{4}[02]0z$/);
    }
    // The bucket holds complete backups of exactly the newest two scheduled ids: the backup before
    // the move, restored above, and the older scheduled ones are gone.
    const manifests = (await keysUnder(PREFIX))
      .filter((k) => k.endsWith('/manifest.json'))
      .map((k) => k.slice(PREFIX.length).split('/')[0]!)
      .sort();
    expect(manifests).toEqual(
      taken
        .slice(0, 2)
        .map((b) => b.id)
        .sort(),
    );
    expect(await keysUnder(`${PREFIX}${release4Backup}/`)).toEqual([]);
    expect(statusOf(o).backups?.some((b) => b.id === release4Backup)).toBe(false);
  });

  it('verifies the latest backup by restoring it into scratch databases, and names the table of a corrupted object', async () => {
    // Verified every 20 s; no more backups, so each verification takes the same latest one.
    apply({ release: '3', backup: { ...backup(), verify: { schedule: '*/20 * * * * *' } } });
    const passed = await d.waitFor(
      NAME,
      'a verification that passed',
      (x) => statusOf(x).backupVerification?.last?.result === 'Verified',
      300_000,
    );
    const ok = statusOf(passed).backupVerification!.last!;
    expect(ok.tables).toBeGreaterThan(0);
    expect(ok.analyticsRows).toBeGreaterThan(0);
    expect(ok.relationalRows).toBeGreaterThan(0);
    expect(passed.status?.conditions?.find((c) => c.type === 'BackupVerified')).toMatchObject({
      status: 'True',
      reason: 'Verified',
    });
    // Plant a corruption: the largest object of the traces table's data, overwritten in place.
    const prefix = `${PREFIX}${ok.id}/analytics/`;
    const index = (await getObject(`${prefix}.backup`)).toString();
    const [largest] = [
      ...index.matchAll(
        /<file><name>(data\/[^/<]+\/traces\/[^<]+)<\/name><size>(\d+)<\/size><checksum>[^<]*<\/checksum><\/file>/g,
      ),
    ]
      .map((m) => ({ name: m[1]!, size: Number(m[2]) }))
      .sort((a, b) => b.size - a.size);
    expect(largest).toBeDefined();
    const key = `${prefix}${largest!.name}`;
    const original = await getObject(key);
    await s3.client.send(
      new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: Buffer.alloc(original.length, 0x5a) }),
    );
    const failed = await d.waitFor(
      NAME,
      'a verification that names the corrupted table',
      (x) => {
        const last = statusOf(x).backupVerification?.last;
        return last?.result === 'Differs' && last.finishedAt > ok.finishedAt;
      },
      300_000,
    );
    expect(statusOf(failed).backupVerification?.last?.message).toContain('traces');
    expect(failed.status?.conditions?.find((c) => c.type === 'BackupVerified')).toMatchObject({
      status: 'False',
      reason: 'VerificationFailed',
    });
    const messages = d.events('reason=BackupVerificationFailed').map((e) => `${e.type}: ${e.message}`);
    expect(messages.some((m) => m.startsWith('Warning: ') && m.includes('traces'))).toBe(true);
    // The scratch databases are dropped after each verification.
    const client = new pg.Client({ connectionString: d.pg.url });
    await client.connect();
    try {
      const { rows } = await client.query(`SELECT datname FROM pg_database WHERE datname LIKE '%\\_verify'`);
      expect(rows).toEqual([]);
    } finally {
      await client.end();
    }
  });
});

const CHECK_CLIENT = (interval: string) =>
  `DO $$ BEGIN EXECUTE format('ALTER DATABASE %I SET client_connection_check_interval = %L', current_database(), '${interval}'); END $$`;

/** Sessions waiting for a lock on `backup_hold` (the backup's pg_dump, while the test holds it). */
async function waiters(client: pg.Client): Promise<number> {
  const r = await client.query<{ n: string }>(
    `SELECT count(*) AS n FROM pg_locks WHERE relation = 'backup_hold'::regclass AND NOT granted`,
  );
  return Number(r.rows[0]!.n);
}
