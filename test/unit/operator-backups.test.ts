/**
 * Backups as the operator runs them: the Job's rendering (args, destination only as secretKeyRef,
 * TTL, termination message), the summary it must leave to count as complete, the ids, the owned
 * record, the validation of spec.backup, and the kubectl requests that ask for a backup or a restore.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { withDefaults } from '../../operator/api/effective.ts';
import type { ObservabilityService, ObservabilityServiceSpec } from '../../operator/api/v1alpha1.ts';
import { parseArgs, UsageError } from '../../operator/kubectl/args.ts';
import { backupRequest, Refused, restoreRequest } from '../../operator/kubectl/requests.ts';
import { parseSummary, passBackupId, requestedBackupId } from '../../operator/planner/backups.ts';
import { BACKUP_ID_LABEL, renderBackupRecord } from '../../operator/render/backups.ts';
import { renderJob } from '../../operator/render/jobs.ts';
import { observedJob } from '../../operator/runtime/observe.ts';
import { validate } from '../../operator/validation.ts';
import type { BackupSummary } from '../../server/contract/backup.ts';
import { BACKUP_SPEC, base } from './operator-walks.ts';

const spec: ObservabilityServiceSpec = { ...base, backup: BACKUP_SPEC };
const meta = { name: 'prod', namespace: 'obs', uid: 'u-1', generation: 3 };
const ctx = { meta, spec: withDefaults(spec) };

const summary: BackupSummary = {
  id: 'release4-0123456789ab',
  startedAt: '2026-01-01T00:00:00Z',
  finishedAt: '2026-01-01T00:02:00Z',
  release: '3',
  writeMode: 'legacy',
  schema: { relational: 12, analytics: 30 },
  parts: [
    { part: 'analytics', objects: 40, bytes: 1_000_000 },
    { part: 'relational', objects: 1, bytes: 20_000 },
  ],
};

describe('the backup Job', () => {
  const job = renderJob(ctx, {
    purpose: 'backup',
    state: 'Release3',
    image: 'observatory:dev',
    attempt: 0,
    inputs: { id: summary.id },
    backup: { id: summary.id, include: ['analytics', 'relational'] },
  });
  const container = job.spec!.template.spec!.containers[0]!;

  it('runs the contract CLI with the id and the parts, and leaves its summary in the termination log', () => {
    expect(container.args).toEqual(['backup', '--id', summary.id, '--include', 'analytics,relational']);
    expect(container.terminationMessagePath).toBe('/dev/termination-log');
    expect(job.spec!.backoffLimit).toBe(0);
    expect(job.spec!.ttlSecondsAfterFinished).toBe(600);
  });

  it('gets the destination, with credentials only as secretKeyRef', () => {
    const env = Object.fromEntries((container.env ?? []).map((e) => [e.name, e]));
    expect(env['SERVICE_S3_BACKUP_BUCKET']?.value).toBe('observatory-backups');
    expect(env['SERVICE_S3_BACKUP_PREFIX']?.value).toBe('obs/');
    expect(env['SERVICE_S3_BACKUP_FORCE_PATH_STYLE']?.value).toBe('true');
    expect(env['SERVICE_S3_BACKUP_ACCESS_KEY_ID']).toEqual({
      name: 'SERVICE_S3_BACKUP_ACCESS_KEY_ID',
      valueFrom: { secretKeyRef: { name: 's3', key: 'access-key-id' } },
    });
    expect(env['SERVICE_S3_BACKUP_SECRET_ACCESS_KEY']?.value).toBeUndefined();
  });

  it("spec.backup.ttlSecondsAfterFinished overrides the Jobs' TTL; other Jobs never see the destination", () => {
    const own = withDefaults({ ...spec, backup: { ...BACKUP_SPEC, ttlSecondsAfterFinished: 7200 } });
    const restore = renderJob(
      { meta, spec: own },
      {
        purpose: 'restore',
        state: 'Release3',
        image: 'observatory:dev',
        attempt: 0,
        backup: { id: summary.id, include: [] },
      },
    );
    expect(restore.spec!.ttlSecondsAfterFinished).toBe(7200);
    expect(restore.spec!.template.spec!.containers[0]!.args).toEqual(['restore', '--id', summary.id]);
    const migrate = renderJob(ctx, { purpose: 'migrate', state: 'Dual', image: 'x', attempt: 0 });
    const names = (migrate.spec!.template.spec!.containers[0]!.env ?? []).map((e) => e.name);
    expect(names.filter((n) => n.startsWith('SERVICE_S3_BACKUP'))).toEqual([]);
  });
});

describe('the summary a backup Job must leave', () => {
  const cases: [string, string | undefined, RegExp | undefined][] = [
    ['a complete summary', JSON.stringify(summary), undefined],
    ['no message', undefined, /no summary/],
    ['not JSON (a crash trace)', 'panic: killed', /not JSON/],
    [
      'a part without counts',
      JSON.stringify({ ...summary, parts: [{ part: 'analytics' }] }),
      /parts\.0\.objects/,
    ],
    ['no parts', JSON.stringify({ ...summary, parts: [] }), /parts/],
    ['another backup', JSON.stringify({ ...summary, id: 'cutover-0123456789ab' }), /is of backup cutover-/],
    ['an unknown write mode', JSON.stringify({ ...summary, writeMode: 'Dual' }), /writeMode/],
  ];
  it.each(cases)('%s', (_, message, why) => {
    const r = parseSummary(summary.id, message);
    if (!why) expect(r).toEqual({ ok: true, summary });
    else expect(r.ok ? 'parsed' : r.why).toMatch(why);
  });

  it('is read from the container that exited 0, not from a killed one', () => {
    const pod = (exitCode: number, message: string): V1Pod => ({
      metadata: { labels: { 'batch.kubernetes.io/job-name': 'prod-backup-1' } },
      status: {
        containerStatuses: [
          {
            name: 'observatory',
            image: 'x',
            imageID: '',
            ready: false,
            restartCount: 0,
            state: { terminated: { exitCode, message } },
          },
        ],
      },
    });
    const job = { metadata: { name: 'prod-backup-1', annotations: { 'observatory.dev/purpose': 'backup' } } };
    expect(observedJob(job, [pod(137, 'partial')]).terminationMessage).toBeUndefined();
    expect(observedJob(job, [pod(137, 'partial'), pod(0, '{"id":"x"}')]).terminationMessage).toBe(
      '{"id":"x"}',
    );
  });
});

describe('backup ids and records', () => {
  it('are the same for the same pass or request, and valid ids as they are', () => {
    const since = '2026-01-01T00:00:00.000Z';
    expect(passBackupId('u-1', 'Release4', since)).toBe(passBackupId('u-1', 'Release4', since));
    expect(passBackupId('u-1', 'Release4', since)).toMatch(/^release4-[0-9a-f]{12}$/);
    expect(passBackupId('u-1', 'Cutover', since)).toMatch(/^cutover-/);
    expect(passBackupId('u-1', 'Release4', '2026-01-02T00:00:00.000Z')).not.toBe(
      passBackupId('u-1', 'Release4', since),
    );
    expect(requestedBackupId('u-1', 'manual-20260101-000000')).toBe('manual-20260101-000000');
    expect(requestedBackupId('u-1', 'Before Friday!')).toMatch(/^requested-[0-9a-f]{12}$/);
  });

  it('each backup has an owned ConfigMap labelled with its id', () => {
    const cm = renderBackupRecord(meta, {
      id: summary.id,
      trigger: 'Release4',
      result: 'Complete',
      job: 'prod-backup-1',
    });
    expect(cm.metadata).toMatchObject({
      name: `prod-backup-${summary.id}`,
      namespace: 'obs',
      labels: { [BACKUP_ID_LABEL]: summary.id, 'app.kubernetes.io/instance': 'prod' },
      ownerReferences: [expect.objectContaining({ kind: 'ObservabilityService', uid: 'u-1' })],
    });
    expect(JSON.parse(cm.data!['backup.json']!)).toMatchObject({ id: summary.id, result: 'Complete' });
  });
});

describe('spec.backup validation', () => {
  it('needs both credential keys or neither, and a part to include', () => {
    const { secretAccessKeySecretRef: _s, ...half } = BACKUP_SPEC.destination;
    expect(validate({ spec: { ...spec, backup: { destination: half } } })).toContainEqual(
      expect.objectContaining({ reason: 'BlobCredentialsIncomplete', field: 'spec.backup.destination' }),
    );
    expect(validate({ spec: { ...spec, backup: { ...BACKUP_SPEC, include: [] } } })).toContainEqual(
      expect.objectContaining({ reason: 'BackupIncludesNothing', field: 'spec.backup.include' }),
    );
    expect(validate({ spec })).toEqual([]);
  });

  it('reserves the destination variables in every template', () => {
    const env = [{ name: 'SERVICE_S3_BACKUP_BUCKET', value: 'mine' }];
    expect(validate({ spec: { ...spec, jobs: { template: { env } } } })).toContainEqual(
      expect.objectContaining({ reason: 'OperatorOwnedEnv', field: 'spec.jobs.template.env' }),
    );
  });
});

describe('kubectl observatory backup and restore', () => {
  const object = (status: ObservabilityService['status'], s = spec): ObservabilityService => ({
    apiVersion: 'observatory.dev/v1alpha1',
    kind: 'ObservabilityService',
    metadata: { ...meta },
    spec: s,
    ...(status ? { status } : {}),
  });
  const complete = {
    id: summary.id,
    trigger: 'Release4' as const,
    result: 'Complete' as const,
    job: 'j',
    release: '3' as const,
    writeMode: 'Legacy' as const,
  };

  it('parse', () => {
    expect(parseArgs(['backup', 'prod'])).toEqual({
      command: { kind: 'backup', action: 'now', name: 'prod', output: 'text' },
      connection: {},
    });
    expect(parseArgs(['restore', summary.id, 'prod', '-n', 'obs'])).toEqual({
      command: { kind: 'restore', backupId: summary.id, name: 'prod' },
      connection: { namespace: 'obs' },
    });
    expect(() => parseArgs(['restore'])).toThrow(UsageError);
    expect(() => parseArgs(['restore', 'Not An Id'])).toThrow(/BACKUP_ID must be a backup id/);
  });

  it('a backup names the moment, and needs spec.backup', () => {
    const r = backupRequest(object(undefined), new Date('2026-11-27T20:13:32.123Z'));
    expect(r).toMatchObject({
      annotation: 'observatory.dev/backup-requested',
      value: 'manual-20261127-201332',
    });
    expect(() => backupRequest(object(undefined, base), new Date())).toThrow(Refused);
  });

  it('a restore needs a complete backup taken in the state the spec asks for; a repeat is a new request', () => {
    expect(restoreRequest(object({ backups: [complete] }), summary.id).value).toBe(summary.id);
    expect(
      restoreRequest(
        object({
          backups: [complete],
          restore: {
            request: summary.id,
            backupId: summary.id,
            phase: 'Complete',
            since: '2026-01-01T00:00:00Z',
            release: '3',
            writeMode: 'Legacy',
          },
        }),
        summary.id,
      ).value,
    ).toBe(`${summary.id}.2`);
    expect(() => restoreRequest(object({ backups: [] }), summary.id)).toThrow(/no backup/);
    expect(() =>
      restoreRequest(
        object({ backups: [{ ...complete, result: 'Failed', message: 'Pod killed' }] }),
        summary.id,
      ),
    ).toThrow(/not complete \(Pod killed\)/);
    expect(() =>
      restoreRequest(
        object({ backups: [complete] }, { ...spec, release: '4', writeMode: 'Dual' }),
        summary.id,
      ),
    ).toThrow(/taken in Release3.*spec\.release: "3"/);
  });
});
