/** Tables for the support bundle of `kubectl observatory report`: ownership, redaction, the archive. */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ObservabilityService } from '../../operator/api/v1alpha1.ts';
import {
  buildBundle,
  type Listed,
  ownedUids,
  podsToRead,
  REDACTED,
  redactSecret,
  referencedSecrets,
  scrub,
  scrubText,
  secretValues,
} from '../../operator/kubectl/report.ts';
import { tarGz } from '../../operator/kubectl/tar.ts';

const b64 = (s: string) => Buffer.from(s).toString('base64');

describe('ownedUids', () => {
  const o = (uid: string, ...owners: string[]): Listed => ({
    metadata: { uid, ownerReferences: owners.map((u) => ({ uid: u })) },
  });
  it.each([
    ['nothing owned', [o('a'), o('b', 'x')], ['root']],
    ['direct children', [o('d', 'root'), o('j', 'root')], ['root', 'd', 'j']],
    // Listed before its owner: found on a later round.
    [
      'grandchildren in any order',
      [o('pod', 'rs'), o('rs', 'dep'), o('dep', 'root')],
      ['root', 'pod', 'rs', 'dep'],
    ],
    ['another owner', [o('pod', 'other'), o('other', 'elsewhere')], ['root']],
  ])('%s', (_, objects, expected) => {
    expect([...ownedUids('root', objects)].sort()).toEqual([...expected].sort());
  });
});

describe('secretValues', () => {
  it.each([
    ['data, raw and base64', [{ data: { k: b64('s3cret-value') } }], ['s3cret-value', b64('s3cret-value')]],
    ['stringData', [{ stringData: { k: 'plain-one' } }], ['plain-one', b64('plain-one')]],
    [
      "a URL's password, encoded and decoded",
      [{ data: { u: b64('postgres://u:p%40ss@h/db') } }],
      ['postgres://u:p%40ss@h/db', b64('postgres://u:p%40ss@h/db'), 'p%40ss', 'p@ss'],
    ],
    ['empty values', [{ data: { k: '' } }], []],
  ])('%s', (_, secrets, expected) => {
    expect(secretValues(secrets).sort()).toEqual([...expected].sort());
  });
});

describe('scrubText', () => {
  const values = ['longsecret', 'abc'];
  it.each([
    ['a value inside text', 'x=longsecret;', `x=${REDACTED};`],
    ['every occurrence', 'longsecret longsecret', `${REDACTED} ${REDACTED}`],
    ['a short value equal to the whole text', 'abc', REDACTED],
    ['a short value inside text is left', 'abcdef', 'abcdef'],
    ['nothing to do', 'hello', 'hello'],
  ])('%s', (_, text, expected) => {
    expect(scrubText(text, values)).toBe(expected);
  });

  it('scrubs every string and key of a value, keeps numbers and Dates as the API wrote them', () => {
    const at = new Date('2026-11-27T10:00:00Z');
    expect(scrub({ a: ['longsecret!', 3], longsecret: { at } }, values)).toEqual({
      a: [`${REDACTED}!`, 3],
      [REDACTED]: { at: '2026-11-27T10:00:00.000Z' },
    });
  });
});

describe('Secrets in the bundle', () => {
  it('shows names and keys only', () => {
    expect(
      redactSecret({
        metadata: { name: 's', managedFields: [{}] },
        type: 'Opaque',
        data: { a: b64('x') },
        stringData: { b: 'y' },
      }),
    ).toEqual({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 's' },
      type: 'Opaque',
      data: { a: REDACTED, b: REDACTED },
    });
  });

  it('finds the Secrets the spec and the children name', () => {
    const names = referencedSecrets([
      { datastores: { postgres: { urlSecretRef: { name: 'db', key: 'url' } } } },
      {
        env: [{ valueFrom: { secretKeyRef: { name: 'tok', key: 't' } } }],
        envFrom: [{ secretRef: { name: 'all' } }],
      },
      { volumes: [{ secret: { secretName: 'certs' } }, { configMap: { name: 'not-a-secret' } }] },
    ]);
    expect([...names].sort()).toEqual(['all', 'certs', 'db', 'tok']);
  });
});

describe('tarGz', () => {
  it('is read back by tar, long paths included', () => {
    const dir = mkdtempSync(join(tmpdir(), 'obs-tar-'));
    try {
      const long = `logs/${'p'.repeat(63)}/${'c'.repeat(63)}.log`;
      const files = [
        { path: 'index.json', content: '{}\n' },
        { path: long, content: 'x'.repeat(1000) },
        { path: 'empty.yaml', content: '' },
      ];
      writeFileSync(join(dir, 'b.tar.gz'), tarGz(files, 'top', Date.parse('2026-11-27T00:00:00Z')));
      execFileSync('tar', ['-xzf', join(dir, 'b.tar.gz'), '-C', dir]);
      for (const f of files) expect(readFileSync(join(dir, 'top', f.path), 'utf8')).toBe(f.content);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('buildBundle', () => {
  const o = {
    apiVersion: 'observatory.dev/v1alpha1',
    kind: 'ObservabilityService',
    metadata: { name: 'demo', namespace: 'obs', uid: 'root', generation: 1 },
    spec: { datastores: { postgres: { urlSecretRef: { name: 'db', key: 'url' } } } },
  } as unknown as ObservabilityService;
  const url = 'postgres://obs:hunter2-long@pg/obs';
  const owned = (kind: string, name: string, uid: string, owner: string, extra: object = {}): Listed => ({
    kind,
    metadata: { name, uid, ownerReferences: [{ uid: owner }] },
    ...extra,
  });
  const objects = [
    owned('Job', 'demo-backfill-1', 'job', 'root'),
    owned('Pod', 'demo-backfill-1-abc', 'jp', 'job', {
      spec: { initContainers: [{ name: 'wait' }], containers: [{ name: 'backfill' }] },
    }),
    owned('Deployment', 'demo-worker', 'dep', 'root'),
    owned('ReplicaSet', 'demo-worker-5d', 'rs', 'dep'),
    owned('Pod', 'demo-worker-5d-x', 'wp', 'rs', {
      metadata: {
        name: 'demo-worker-5d-x',
        uid: 'wp',
        ownerReferences: [{ uid: 'rs' }],
        labels: { 'app.kubernetes.io/component': 'worker' },
      },
      status: { phase: 'Running' },
    }),
    owned('ConfigMap', 'elsewhere', 'cm', 'other'),
  ];

  it('reads the logs of the Job Pods, every container, and the reports of running worker Pods', () => {
    expect(podsToRead(o, objects)).toEqual({
      logs: [{ pod: 'demo-backfill-1-abc', containers: ['wait', 'backfill'] }],
      workers: ['demo-worker-5d-x'],
    });
  });

  it("holds what the object owns and its Events, with no Secret value in any file, the worker's answers included", () => {
    const files = buildBundle({
      object: o,
      objects,
      events: [
        { kind: 'Event', involvedObject: { uid: 'job' }, message: `cannot reach ${url}` },
        { kind: 'Event', involvedObject: { uid: 'cm' }, message: 'not ours' },
      ],
      secrets: [
        { metadata: { name: 'db' }, data: { url: b64(url) } },
        { metadata: { name: 'unrelated' }, data: { token: b64('tok-123456') } },
      ],
      logs: [{ pod: 'demo-backfill-1-abc', container: 'backfill', text: 'auth failed for hunter2-long\n' }],
      worker: [
        { pod: 'demo-worker-5d-x', report: 'health', body: { checks: [{ error: `bad tok-123456` }] } },
      ],
      unreadable: [],
      createdAt: '2026-11-27T10:00:00.000Z',
    });
    const byPath = new Map(files.map((f) => [f.path, f.content]));
    expect([...byPath.keys()].sort()).toEqual([
      'events.yaml',
      'index.json',
      'logs/demo-backfill-1-abc/backfill.log',
      'objects/Deployment/demo-worker.yaml',
      'objects/Job/demo-backfill-1.yaml',
      'objects/Pod/demo-backfill-1-abc.yaml',
      'objects/Pod/demo-worker-5d-x.yaml',
      'objects/ReplicaSet/demo-worker-5d.yaml',
      'objects/Secret/db.yaml',
      'observabilityservice.yaml',
      'worker/demo-worker-5d-x/health.json',
    ]);
    for (const [path, text] of byPath)
      for (const value of [url, b64(url), 'hunter2-long', 'tok-123456', b64('tok-123456')])
        expect(text.includes(value), `${path} holds ${value}`).toBe(false);
    expect(byPath.get('events.yaml')).toContain(`cannot reach ${REDACTED}`);
    expect(byPath.get('events.yaml')).not.toContain('not ours');
    expect(byPath.get('logs/demo-backfill-1-abc/backfill.log')).toBe(`auth failed for ${REDACTED}\n`);
  });
});
