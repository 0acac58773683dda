// `kubectl observatory` driven through the real kubectl (which finds the plugin on PATH) against an
// API server alone with the CRD: the status the test writes through the status subresource is
// what the plugin shows, the requests land as annotations on the live object, `plan` writes
// nothing, refusals, missing objects and missing access exit non-zero with one line, and the
// support bundle holds the object's own objects and no Secret value.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { repoRoot } from '../../cluster/paths.ts';
import { type ControlPlane, startControlPlane } from '../fixtures/api-server.ts';
import { BACKFILL_JOB, BACKFILLING_GATES, backfillingStatus, condition } from '../fixtures/obsvc-status.ts';
import { statusPatch } from '../fixtures/operator/status-patch.ts';
import { userManifest } from '../fixtures/operator/user-manifest.ts';

// Each plugin run starts Node and loads client-node: seconds each on a loaded two-core machine.
const SLOW = 240_000;

let api: ControlPlane;
let dir: string;
const NS = 'obs';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** `kubectl <args>` with the plugin directory and kubectl's own on PATH, as a user would have them. */
function kubectl(args: string[], env: Record<string, string> = {}): Promise<Run> {
  const PATH = [join(repoRoot, 'bin'), dirname(api.kubectlPath), process.env['PATH']].join(':');
  return new Promise((resolve) => {
    execFile(
      api.kubectlPath,
      args,
      { env: { ...process.env, PATH, KUBECONFIG: api.kubeconfigPath, ...env }, timeout: 60_000 },
      (error, stdout, stderr) =>
        resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

async function ok(args: string[], env?: Record<string, string>): Promise<string> {
  const r = await kubectl(args, env);
  if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
  return r.stdout;
}

const live = async (name: string) => JSON.parse(await ok(['get', 'obsvc', name, '-n', NS, '-o', 'json']));

const manifest = (name: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify(
    userManifest(name, NS, {
      writeMode: 'EventsOnly',
      nativeOtelBehaviour: 'Direct',
      upgrade: { backupConfirmed: true },
      ...extra,
    }),
  );

async function create(name: string, extra?: Record<string, unknown>): Promise<void> {
  const file = join(dir, `${name}.json`);
  await writeFile(file, manifest(name, extra));
  await ok(['create', '-f', file]);
}

/** Writes .status through the status subresource, as the operator does. */
async function writeStatus(name: string, status: Record<string, unknown>): Promise<void> {
  await ok(statusPatch(name, NS, status));
}

const backfilling = backfillingStatus;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'observatory-kubectl-plugin-'));
  api = await startControlPlane();
  await ok(['create', 'namespace', NS]);
  await create('demo');
  await writeStatus('demo', backfilling);
});
afterAll(async () => {
  await api?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('kubectl observatory status', () => {
  it(
    'shows the state, the gates, what blocks and a bar per backfill step from the live status',
    async () => {
      const out = await ok(['observatory', 'status', 'demo', '-n', NS]);
      expect(out).toContain(`ObservabilityService ${NS}/demo, generation 1 (observed 1)`);
      expect(out).toMatch(/State:\s+Dual\n/);
      expect(out).toMatch(/Desired:\s+EventsOnly\n/);
      expect(out).toMatch(
        /BackfillComplete\s+False\s+BackfillRunning\s+step 2 of 4 \(3\/10 chunks\); 1\/4 done/,
      );
      expect(out).toMatch(/CutoverReady\s+False\s+GatesClosed/);
      expect(out).toContain(`Blocked by:\n  - Job ${BACKFILL_JOB} (backfill step 2) is running`);
      const bars = out.split('\n').filter((l) => /^\s+step \d/.test(l));
      expect(bars.map((l) => l.trim().split(/\s+/))).toEqual([
        ['step', '1', '[####################]', 'finished', '8/8', 'chunks'],
        ['step', '2', '[######--------------]', 'running', '3/10', 'chunks'],
        ['step', '3', '[--------------------]', 'pending', '0/0', 'chunks'],
        ['step', '4', '[--------------------]', 'pending', '0/0', 'chunks'],
      ]);
    },
    SLOW,
  );

  it(
    '-o json carries the written status field by field; the name may be left out when it is the only one',
    async () => {
      const doc = JSON.parse(await ok(['observatory', 'status', '-n', NS, '-o', 'json']));
      expect(doc).toMatchObject({
        name: 'demo',
        namespace: NS,
        generation: 1,
        observedGeneration: 1,
        state: 'Dual',
        desiredWriteMode: 'EventsOnly',
        phase: 'Backfilling',
        stalled: null,
        blockedBy: backfilling.blockedBy,
        backfill: { completedSteps: 1, totalSteps: 4, currentStep: 2, currentJob: BACKFILL_JOB },
      });
      expect(doc.backfill.steps).toEqual(backfilling.backfill!.steps);
      // Every gate as written, in the API's condition order.
      const written = new Map(backfilling.conditions!.map((c) => [c.type, c]));
      expect(doc.gates).toEqual(
        BACKFILLING_GATES.map((type) => {
          const { status, reason, message } = written.get(type)!;
          return { type, status, reason, message };
        }),
      );
    },
    SLOW,
  );

  it(
    '--help, usage errors and a missing object exit with their codes and one line',
    async () => {
      const help = await kubectl(['observatory', '--help']);
      expect(help.code).toBe(0);
      expect(help.stdout).toContain('retry-backfill STEP [NAME]');
      const usage = await kubectl(['observatory', 'status', '-o', 'yaml']);
      expect(usage.code).toBe(2);
      expect(usage.stderr).toContain('--output yaml is not supported');
      const missing = await kubectl(['observatory', 'status', 'nosuch', '-n', NS]);
      expect(missing.code).toBe(1);
      expect(missing.stderr.trim()).toBe(`error: ObservabilityService "nosuch" not found in namespace ${NS}`);
      const empty = await kubectl(['observatory', 'status']);
      expect(empty.code).toBe(1);
      expect(empty.stderr).toContain('no ObservabilityService in namespace default');
      const context = await kubectl(['observatory', 'status', '--context', 'elsewhere']);
      expect(context.code).toBe(2);
      expect(context.stderr).toContain('context "elsewhere" is not in the kubeconfig');
    },
    SLOW,
  );
});

describe('kubectl observatory plan', () => {
  it(
    "prints the planner's next actions for the live object and writes nothing",
    async () => {
      const before = await live('demo');
      const r = await kubectl(['observatory', 'plan', 'demo', '-n', NS]);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(r.stdout).toContain('computed locally; nothing was written');
      // Nothing of the object exists in the cluster: its Services are missing, no backfill Job may
      // start before the Dual rollout is complete, the cutover (Manual by default) waits for an
      // approval, and without a worker Pod its reports are not observed.
      expect(r.stdout).toContain('apply Service demo-web (web)');
      expect(r.stdout).toContain('apply Service demo-worker (worker)');
      expect(r.stdout).not.toContain('create Job');
      expect(r.stdout).toMatch(/Blocked by:\n( {2}- .*\n)* {2}- .*not approved/);
      // The requested EventsOnly runs in no Pod yet: each variable it changes, and what approving does.
      expect(r.stdout).toContain('Pending: Dual -> EventsOnly, not rendered into any Pod yet');
      expect(r.stdout).toContain('  SERVICE_MIGRATION_V4_WRITE_MODE: dual -> events_only');
      expect(r.stdout).toMatch(/Then: approving \(kubectl observatory approve demo\)/);
      expect(r.stdout).toContain(
        "Not observed (the plan waits for it, as the operator would): the worker's producer report",
      );
      const after = await live('demo');
      expect(after.metadata.resourceVersion).toBe(before.metadata.resourceVersion);
      expect(await ok(['get', 'deployments,services,jobs', '-n', NS, '-o', 'name'])).toBe('');
    },
    SLOW,
  );
});

describe('kubectl observatory approve', () => {
  it(
    'writes the approval for the current generation, and for the new one after a spec change',
    async () => {
      await create('approve-me');
      expect((await ok(['observatory', 'approve', 'approve-me', '-n', NS])).trim()).toBe(
        `approved the cutover of ${NS}/approve-me for generation 1`,
      );
      let o = await live('approve-me');
      expect(o.metadata.annotations['observatory.dev/approve-cutover']).toBe('1');
      await ok([
        'patch',
        'obsvc',
        'approve-me',
        '-n',
        NS,
        '--type=merge',
        '-p',
        '{"spec":{"web":{"replicas":2}}}',
      ]);
      await ok(['observatory', 'approve', 'approve-me', '-n', NS]);
      o = await live('approve-me');
      expect(o.metadata.generation).toBe(2);
      expect(o.metadata.annotations['observatory.dev/approve-cutover']).toBe('2');
    },
    SLOW,
  );

  it(
    'refuses after the cutover',
    async () => {
      await create('cut-over');
      await writeStatus('cut-over', { observedGeneration: 1, state: 'EventsOnly' });
      const r = await kubectl(['observatory', 'approve', 'cut-over', '-n', NS]);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('already made the cutover to EventsOnly');
      expect(
        (await live('cut-over')).metadata.annotations?.['observatory.dev/approve-cutover'],
      ).toBeUndefined();
    },
    SLOW,
  );
});

describe('kubectl observatory retry-backfill', () => {
  const failed = {
    ...backfilling,
    phase: 'Stalled',
    conditions: [
      condition('Stalled', 'True', 'BackfillStepFailed', `Job ${BACKFILL_JOB} (backfill step 2) failed`),
      condition('BackfillComplete', 'False', 'BackfillStepFailed', `step 2 of 4 failed: Job ${BACKFILL_JOB}`),
    ],
    backfill: {
      ...backfilling.backfill!,
      steps: [
        { step: 1, status: 'finished', chunksDone: 8, chunksTotal: 8 },
        { step: 2, status: 'failed', chunksDone: 3, chunksTotal: 10 },
      ],
    },
  };

  it(
    'refuses an unknown step and a step that has not failed, naming it, and writes nothing',
    async () => {
      await create('stuck');
      await writeStatus('stuck', failed);
      const unknown = await kubectl(['observatory', 'retry-backfill', '5', 'stuck', '-n', NS]);
      expect(unknown.code).toBe(1);
      expect(unknown.stderr.trim()).toBe('error: backfill step 5 is unknown: stuck runs steps 1, 2, 3, 4');
      const finished = await kubectl(['observatory', 'retry-backfill', '1', 'stuck', '-n', NS]);
      expect(finished.code).toBe(1);
      expect(finished.stderr).toContain('backfill step 1 has not failed (finished)');
      const running = await kubectl(['observatory', 'retry-backfill', '2', 'demo', '-n', NS]);
      expect(running.code).toBe(1);
      expect(running.stderr).toContain('backfill step 2 has not failed (running)');
      expect((await live('stuck')).metadata.annotations?.['observatory.dev/retry-backfill']).toBeUndefined();
    },
    SLOW,
  );

  it(
    'writes the retry annotation for the failed step, with a new value once the first was consumed',
    async () => {
      await ok(['observatory', 'retry-backfill', '2', 'stuck', '-n', NS]);
      expect((await live('stuck')).metadata.annotations['observatory.dev/retry-backfill']).toBe('2');
      // The operator consumed "2" and the new attempt failed again: the same value would be ignored.
      await writeStatus('stuck', {
        ...failed,
        attempts: { 'backfill-2': 1 },
        consumedRetries: { 'observatory.dev/retry-backfill': '2' },
      });
      await ok(['observatory', 'retry-backfill', '2', 'stuck', '-n', NS]);
      const value = (await live('stuck')).metadata.annotations['observatory.dev/retry-backfill'];
      expect(value).not.toBe('2');
      expect(value).toMatch(/^2\.\d+$/);
    },
    SLOW,
  );
});

describe('access', () => {
  it(
    "uses the context's namespace, and says so when the user may not read or annotate",
    async () => {
      await ok(['create', 'serviceaccount', 'viewer', '-n', NS]);
      const token = (await ok(['create', 'token', 'viewer', '-n', NS])).trim();
      const admin = parse(await readFile(api.kubeconfigPath, 'utf8'));
      const name = admin.contexts[0].name;
      admin.users = [{ name: 'viewer', user: { token } }];
      admin.contexts = [
        { name, context: { cluster: admin.contexts[0].context.cluster, user: 'viewer', namespace: NS } },
      ];
      const viewer = join(dir, 'viewer.kubeconfig');
      await writeFile(viewer, stringify(admin), { mode: 0o600 });

      const denied = await kubectl(['observatory', 'status', 'demo', '--kubeconfig', viewer]);
      expect(denied.code).toBe(1);
      expect(denied.stderr).toMatch(/^error: no access: .*observabilityservices/);

      await ok([
        'create',
        'role',
        'obsvc-reader',
        '-n',
        NS,
        '--verb=get,list',
        '--resource=observabilityservices',
      ]);
      await ok([
        'create',
        'rolebinding',
        'viewer-reads',
        '-n',
        NS,
        '--role=obsvc-reader',
        `--serviceaccount=${NS}:viewer`,
      ]);
      const read = await kubectl(['observatory', 'status', 'demo', '--kubeconfig', viewer]);
      expect(read.stderr).toBe('');
      expect(read.stdout).toMatch(/State:\s+Dual/);
      const approve = await kubectl(['observatory', 'approve', 'demo', '--kubeconfig', viewer]);
      expect(approve.code).toBe(1);
      expect(approve.stderr).toMatch(/^error: no access: .*patch/);
    },
    SLOW,
  );
});

describe('kubectl observatory report', () => {
  /** Every Secret's values: passwords in URLs, a token, and one a ConfigMap, an env literal and an Event repeat. */
  const token = `tok-${randomBytes(12).toString('hex')}`;
  const password = randomBytes(9).toString('base64url');
  const SECRETS: Record<string, Record<string, string>> = {
    'bundle-datastores': {
      database: `postgres://obs:${password}@pg:5432/obs`,
      clickhouse: `http://default:${randomBytes(8).toString('hex')}@ch:8123`,
      redis: `redis://:${randomBytes(8).toString('hex')}@redis:6379`,
    },
    'bundle-api-token': { token },
  };
  const apply = async (doc: object) => {
    const file = join(dir, `${randomBytes(4).toString('hex')}.json`);
    await writeFile(file, JSON.stringify(doc));
    return JSON.parse(await ok(['create', '-f', file, '-o', 'json']));
  };
  const owner = (kind: string, apiVersion: string, o: { metadata: { name: string; uid: string } }) => ({
    apiVersion,
    kind,
    name: o.metadata.name,
    uid: o.metadata.uid,
    controller: true,
  });

  /** Every file under a directory, with its text. */
  async function filesOf(root: string): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    for (const entry of await readdir(root, { recursive: true, withFileTypes: true }))
      if (entry.isFile()) {
        const path = join(entry.parentPath, entry.name);
        out.set(relative(root, path), await readFile(path, 'utf8'));
      }
    return out;
  }

  function expectNoSecret(files: Map<string, string>) {
    expect(files.size).toBeGreaterThan(5);
    for (const [path, text] of files)
      for (const data of Object.values(SECRETS))
        for (const value of Object.values(data))
          for (const form of [value, Buffer.from(value).toString('base64')])
            expect(text.includes(form), `${path} holds a Secret value`).toBe(false);
  }

  it(
    'bundles the object, its Events and owned objects with every Secret value redacted, as a directory and a .tar.gz',
    async () => {
      for (const [name, data] of Object.entries(SECRETS))
        await ok([
          'create',
          'secret',
          'generic',
          name,
          '-n',
          NS,
          ...Object.entries(data).map(([k, v]) => `--from-literal=${k}=${v}`),
        ]);
      await ok(['create', 'serviceaccount', 'default', '-n', NS]);
      const spec = JSON.parse(manifest('bundle'));
      for (const store of ['postgres', 'clickhouse', 'redis'])
        spec.spec.datastores[store].urlSecretRef.name = 'bundle-datastores';
      const o = await apply(spec);
      const byO = owner('ObservabilityService', 'observatory.dev/v1alpha1', o);
      const labels = { 'app.kubernetes.io/instance': 'bundle', 'app.kubernetes.io/component': 'worker' };
      const container = {
        name: 'worker',
        image: 'observatory:dev',
        env: [
          {
            name: 'DATABASE_URL',
            valueFrom: { secretKeyRef: { name: 'bundle-datastores', key: 'database' } },
          },
          // A literal someone pasted: the same value as the Secret's.
          { name: 'API_TOKEN', value: token },
        ],
      };
      await apply({
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'bundle-worker', namespace: NS, labels, ownerReferences: [byO] },
        spec: {
          selector: { matchLabels: labels },
          template: { metadata: { labels }, spec: { containers: [container] } },
        },
      });
      const job = await apply({
        apiVersion: 'batch/v1',
        kind: 'Job',
        metadata: { name: 'bundle-backfill-1', namespace: NS, ownerReferences: [byO] },
        spec: {
          template: {
            spec: { restartPolicy: 'Never', containers: [{ name: 'backfill', image: 'observatory:dev' }] },
          },
        },
      });
      await apply({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: {
          name: 'bundle-backfill-1-x7k2p',
          namespace: NS,
          ownerReferences: [owner('Job', 'batch/v1', job)],
        },
        spec: { restartPolicy: 'Never', containers: [{ name: 'backfill', image: 'observatory:dev' }] },
      });
      await apply({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'bundle-settings', namespace: NS, ownerReferences: [byO] },
        data: { note: `the token is ${token}, the password ${password}` },
      });
      await apply({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'someone-elses', namespace: NS },
        data: { note: 'not owned' },
      });
      await apply({
        apiVersion: 'v1',
        kind: 'Event',
        metadata: { name: 'bundle.1', namespace: NS },
        involvedObject: {
          apiVersion: byO.apiVersion,
          kind: byO.kind,
          name: byO.name,
          uid: byO.uid,
          namespace: NS,
        },
        reason: 'BackfillFailed',
        message: `connection to ${SECRETS['bundle-datastores']!.redis} refused`,
        type: 'Warning',
      });

      const out = join(dir, 'bundle');
      const r = await kubectl(['observatory', 'report', 'bundle', '-n', NS, '-o', out]);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      const files = await filesOf(out);
      expectNoSecret(files);
      const index = JSON.parse(files.get('index.json')!);
      expect(index.objects).toEqual([
        'ConfigMap/bundle-settings',
        'Deployment/bundle-worker',
        'Job/bundle-backfill-1',
        'Pod/bundle-backfill-1-x7k2p',
        'Secret/bundle-datastores (keys only)',
      ]);
      expect(index.events).toBe(1);
      expect(files.get('events.yaml')).toContain('connection to [REDACTED] refused');
      expect(files.get('objects/ConfigMap/bundle-settings.yaml')).toContain(
        'the token is [REDACTED], the password [REDACTED]',
      );
      expect(parse(files.get('objects/Secret/bundle-datastores.yaml')!).data).toEqual({
        clickhouse: '[REDACTED]',
        database: '[REDACTED]',
        redis: '[REDACTED]',
      });
      const worker = parse(files.get('objects/Deployment/bundle-worker.yaml')!);
      expect(worker.spec.template.spec.containers[0].env).toEqual([
        { name: 'DATABASE_URL', valueFrom: { secretKeyRef: { name: 'bundle-datastores', key: 'database' } } },
        { name: 'API_TOKEN', value: '[REDACTED]' },
      ]);
      expect(parse(files.get('observabilityservice.yaml')!).metadata.uid).toBe(o.metadata.uid);
      // No node runs the Job's Pod: its log file says why instead.
      expect(files.get('logs/bundle-backfill-1-x7k2p/backfill.log')).toMatch(/^\(no log: /);

      const tarball = join(dir, 'bundle.tar.gz');
      expect((await kubectl(['observatory', 'report', 'bundle', '-n', NS, '-o', tarball])).code).toBe(0);
      const unpacked = join(dir, 'unpacked');
      await mkdir(unpacked);
      await new Promise<void>((resolve, reject) =>
        execFile('tar', ['-xzf', tarball, '-C', unpacked], (err) => (err ? reject(err) : resolve())),
      );
      const [top] = await readdir(unpacked);
      expect(top).toMatch(/^observatory-report-bundle-\d{8}T\d{6}Z$/);
      const packed = await filesOf(join(unpacked, top!));
      expectNoSecret(packed);
      expect([...packed.keys()].sort()).toEqual([...files.keys()].sort());

      const again = await kubectl(['observatory', 'report', 'bundle', '-n', NS, '-o', out]);
      expect(again.code).toBe(1);
      expect(again.stderr).toContain('is not empty');
    },
    SLOW,
  );
});
