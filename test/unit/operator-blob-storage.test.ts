/**
 * Blob storage from the spec (`spec.blobStorage`): what each role's Pods are given, judged by the
 * server's own configuration parser; credentials only as Secret references (and in the rollout
 * hash); absent means off with the rendering unchanged; the CRD bounds each field as the server
 * does; the reconciler repeats the credentials rule.
 */
import type { V1EnvVar } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { buildCrd } from '../../operator/api/crd.ts';
import type { OpenApi } from '../../operator/api/schema.ts';
import { OPERATOR_OWNED_ENV } from '../../operator/api/template.ts';
import type { BlobStorage, ObservabilityServiceSpec } from '../../operator/api/v1alpha1.ts';
import { renderJob } from '../../operator/render/jobs.ts';
import { INPUTS_HASH_ANNOTATION } from '../../operator/render/names.ts';
import type { SourceDigests } from '../../operator/render/sources.ts';
import { renderDeployment } from '../../operator/render/workloads.ts';
import { validate } from '../../operator/validation.ts';
import { loadConfig, type ServiceConfig } from '../../server/kernel/config/env.ts';
import { resolved } from '../fixtures/operator/kubelet-env.ts';
import { renderContext, renderSpec } from '../fixtures/operator/render-context.ts';

const base = renderSpec();
type Role = 'web' | 'worker';

const withBlobs = (blobStorage: BlobStorage): ObservabilityServiceSpec => ({ ...base, blobStorage });
const deployment = (spec: ObservabilityServiceSpec, role: Role, sources?: SourceDigests) =>
  renderDeployment(renderContext(spec, sources), role, 'Dual');
const envOf = (spec: ObservabilityServiceSpec, role: Role): V1EnvVar[] =>
  deployment(spec, role).spec!.template.spec!.containers[0]!.env!;

const configOf = (spec: ObservabilityServiceSpec, role: Role): ServiceConfig =>
  loadConfig(resolved(envOf(spec, role)));

const keys = {
  accessKeyIdSecretRef: { name: 's3', key: 'id' },
  secretAccessKeySecretRef: { name: 's3', key: 'secret' },
};
const media = {
  bucket: 'obs-media',
  prefix: 'media/',
  region: 'eu-central-1',
  endpoint: 'http://s3.storage.svc:7070',
  forcePathStyle: true,
  ...keys,
  maxContentLength: 5_000_000,
  downloadUrlExpirySeconds: 600,
};
const exportsBucket = {
  bucket: 'obs-exports',
  prefix: 'exports/',
  region: 'us-west-2',
  intervalSeconds: 300,
  accessKeyIdSecretRef: { name: 'exp', key: 'id' },
  secretAccessKeySecretRef: { name: 'exp', key: 'secret' },
};

describe('spec.blobStorage read back by the server', () => {
  const rows: {
    case: string;
    blobs: BlobStorage;
    role: Role;
    read: (c: ServiceConfig) => unknown;
    want: unknown;
  }[] = [
    {
      case: 'media: every field',
      blobs: { media },
      role: 'web',
      read: (c) => c.media,
      want: {
        s3: {
          bucket: 'obs-media',
          prefix: 'media/',
          region: 'eu-central-1',
          endpoint: 'http://s3.storage.svc:7070',
          forcePathStyle: true,
          credentials: { accessKeyId: 's3:id', secretAccessKey: 's3:secret' },
        },
        maxContentLength: 5_000_000,
        downloadUrlExpirySeconds: 600,
      },
    },
    {
      case: 'media: bucket only (AWS S3, ambient credentials, server defaults)',
      blobs: { media: { bucket: 'obs-media' } },
      role: 'web',
      read: (c) => c.media,
      want: {
        s3: {
          bucket: 'obs-media',
          prefix: '',
          region: 'us-east-1',
          endpoint: undefined,
          forcePathStyle: false,
          credentials: undefined,
        },
        maxContentLength: 1_000_000_000,
        downloadUrlExpirySeconds: 3600,
      },
    },
    {
      case: 'exports: every field, on the worker',
      blobs: { exports: { ...exportsBucket, endpoint: 'https://minio.example', forcePathStyle: false } },
      role: 'worker',
      read: (c) => [c.exportStorage, c.exportIntervalSeconds],
      want: [
        {
          bucket: 'obs-exports',
          prefix: 'exports/',
          region: 'us-west-2',
          endpoint: 'https://minio.example',
          forcePathStyle: false,
          credentials: { accessKeyId: 'exp:id', secretAccessKey: 'exp:secret' },
        },
        300,
      ],
    },
    {
      case: 'exports on web (accepts export settings, lists files)',
      blobs: { exports: exportsBucket },
      role: 'web',
      read: (c) => [c.exportStorage?.bucket, c.exportStorage?.credentials?.accessKeyId],
      want: ['obs-exports', 'exp:id'],
    },
    {
      case: 'both buckets on the worker (retention deletes the media expired traces leave unlinked)',
      blobs: { media, exports: exportsBucket },
      role: 'worker',
      read: (c) => [c.media.s3?.credentials?.accessKeyId, c.exportStorage?.bucket],
      want: ['s3:id', 'obs-exports'],
    },
    {
      case: 'both buckets on web, each with its own keys',
      blobs: { media, exports: exportsBucket },
      role: 'web',
      read: (c) => [c.media.s3?.credentials?.accessKeyId, c.exportStorage?.credentials?.accessKeyId],
      want: ['s3:id', 'exp:id'],
    },
    {
      case: 'absent: off',
      blobs: {},
      role: 'web',
      read: (c) => [c.media.s3, c.exportStorage],
      want: [undefined, undefined],
    },
  ];
  it.each(rows)('$case', ({ blobs, role, read, want }) => {
    expect(read(configOf(withBlobs(blobs), role))).toEqual(want);
  });

  it('credentials are Secret references only, never values in the Deployment', () => {
    const spec = withBlobs({ media, exports: exportsBucket });
    for (const role of ['web', 'worker'] as const) {
      const env = envOf(spec, role);
      const credentials = env.filter((e) => /_(ACCESS_KEY_ID|SECRET_ACCESS_KEY)$/.test(e.name));
      expect(credentials.length).toBe(4);
      for (const e of credentials) {
        expect(e.value).toBeUndefined();
        expect(e.valueFrom?.secretKeyRef?.name).toMatch(/^(s3|exp)$/);
      }
    }
  });

  it('without blobStorage the rendering is unchanged (existing specs do not roll)', () => {
    for (const role of ['web', 'worker'] as const) {
      const before = deployment(base, role);
      const empty = deployment(withBlobs({}), role);
      expect(empty).toEqual(before);
      expect(before.spec!.template.spec!.containers[0]!.env!.map((e) => e.name)).not.toContainEqual(
        expect.stringMatching(/^SERVICE_S3_|^SERVICE_EXPORT_/),
      );
    }
  });

  it('the Jobs get no blob storage', () => {
    const job = renderJob(renderContext(withBlobs({ media, exports: exportsBucket })), {
      purpose: 'migrate',
      state: 'Dual',
      image: 'i',
      attempt: 0,
    });
    const names = job.spec!.template.spec!.containers[0]!.env!.map((e) => e.name);
    expect(names.filter((n) => n.startsWith('SERVICE_S3_') || n.startsWith('SERVICE_EXPORT_'))).toEqual([]);
  });

  it('every variable rendered is one the operator owns (refused in template.env)', () => {
    const spec = withBlobs({ media, exports: exportsBucket });
    const rendered = [...envOf(spec, 'web'), ...envOf(spec, 'worker')].map((e) => e.name);
    expect(rendered.filter((n) => !OPERATOR_OWNED_ENV.includes(n))).toEqual([]);
    expect(OPERATOR_OWNED_ENV).toContain('SERVICE_S3_MEDIA_UPLOAD_SECRET_ACCESS_KEY');
    expect(OPERATOR_OWNED_ENV).toContain('SERVICE_S3_BATCH_EXPORT_BUCKET');
  });
});

describe('bucket keys in the rollout hash', () => {
  const spec = withBlobs({ media, exports: exportsBucket });
  const digests = (s3Secret: string, expSecret: string): SourceDigests => ({
    secrets: {
      pg: { url: 'p' },
      ch: { url: 'c' },
      redis: { url: 'r' },
      s3: { id: 'i', secret: s3Secret },
      exp: { id: 'i', secret: expSecret },
    },
    configMaps: {},
  });
  const hash = (role: Role, d: SourceDigests) =>
    deployment(spec, role, d).spec!.template.metadata!.annotations![INPUTS_HASH_ANNOTATION];

  it.each([
    { case: 'media key rotated', after: digests('m2', 'e1'), web: true, worker: true },
    { case: 'export key rotated', after: digests('m1', 'e2'), web: true, worker: true },
    { case: 'nothing rotated', after: digests('m1', 'e1'), web: false, worker: false },
  ])('$case: web rolls=$web, worker rolls=$worker', ({ after, web, worker }) => {
    const before = digests('m1', 'e1');
    expect(hash('web', after) !== hash('web', before)).toBe(web);
    expect(hash('worker', after) !== hash('worker', before)).toBe(worker);
  });
});

describe('the CRD bounds spec.blobStorage as the server does', () => {
  const crdSpec = buildCrd().spec.versions[0]!.schema.openAPIV3Schema.properties!.spec!;
  const at = (...path: string[]) => path.reduce((n: OpenApi, k) => n.properties![k]!, crdSpec);

  it('limits and forms come from the server contract', () => {
    expect(at('blobStorage', 'media', 'maxContentLength')).toMatchObject({
      minimum: 1,
      maximum: Number.MAX_SAFE_INTEGER,
    });
    expect(at('blobStorage', 'media', 'downloadUrlExpirySeconds')).toMatchObject({
      minimum: 1,
      maximum: 604_800,
    });
    expect(at('blobStorage', 'exports', 'intervalSeconds')).toMatchObject({ minimum: 1, maximum: 86_400 });
    for (const purpose of ['media', 'exports']) {
      expect(at('blobStorage', purpose).required).toEqual(['bucket']);
      expect(at('blobStorage', purpose, 'accessKeyIdSecretRef').required).toEqual(['name', 'key']);
    }
  });

  // Each value the CRD pattern refuses, the server refuses too (naming the variable), and the reverse.
  const crdAccepts = (field: 'bucket' | 'prefix' | 'endpoint', v: string) =>
    new RegExp(at('blobStorage', 'media', field).pattern!).test(v);
  it.each([
    { field: 'bucket', v: 'obs-media', ok: true },
    { field: 'bucket', v: 'a.b-c', ok: true },
    { field: 'bucket', v: 'Obs', ok: false },
    { field: 'bucket', v: 'ab', ok: false },
    { field: 'bucket', v: '-obs', ok: false },
    { field: 'bucket', v: 'obs_media', ok: false },
    { field: 'prefix', v: 'media/', ok: true },
    { field: 'prefix', v: '/media', ok: false },
    { field: 'endpoint', v: 'http://127.0.0.1:7070', ok: true },
    { field: 'endpoint', v: 'https://s3.example', ok: true },
    { field: 'endpoint', v: 's3.example', ok: false },
    { field: 'endpoint', v: 'ftp://s3.example', ok: false },
  ] as const)('$field $v: accepted=$ok by the CRD and the server', ({ field, v, ok }) => {
    expect(crdAccepts(field, v)).toBe(ok);
    const env = {
      SERVICE_S3_MEDIA_UPLOAD_BUCKET: 'obs-media',
      [`SERVICE_S3_MEDIA_UPLOAD_${field.toUpperCase()}`]: v,
    };
    const load = () => loadConfig(env);
    if (ok) expect(load).not.toThrow();
    else expect(load).toThrow(`SERVICE_S3_MEDIA_UPLOAD_${field.toUpperCase()}`);
  });

  it.each([
    ['SERVICE_S3_MEDIA_MAX_CONTENT_LENGTH', '0'],
    ['SERVICE_S3_MEDIA_DOWNLOAD_URL_EXPIRY_SECONDS', '604801'],
    ['SERVICE_EXPORT_INTERVAL_SECONDS', '86401'],
  ])('the server refuses %s=%s beyond the CRD bounds', (name, v) => {
    expect(() => loadConfig({ [name]: v })).toThrow(name);
  });
});

describe('the reconciler repeats the credentials rule', () => {
  it.each([
    { case: 'both keys', bucket: { bucket: 'b-1', ...keys }, refused: false },
    { case: 'neither (ambient)', bucket: { bucket: 'b-1' }, refused: false },
    {
      case: 'only the key id',
      bucket: { bucket: 'b-1', accessKeyIdSecretRef: keys.accessKeyIdSecretRef },
      refused: true,
    },
    {
      case: 'only the secret key',
      bucket: { bucket: 'b-1', secretAccessKeySecretRef: keys.secretAccessKeySecretRef },
      refused: true,
    },
  ])('$case: refused=$refused', ({ bucket, refused }) => {
    for (const purpose of ['media', 'exports'] as const) {
      const found = validate({ spec: withBlobs({ [purpose]: bucket }) }).filter(
        (v) => v.reason === 'BlobCredentialsIncomplete',
      );
      expect(found).toEqual(
        refused
          ? [
              {
                reason: 'BlobCredentialsIncomplete',
                field: `spec.blobStorage.${purpose}`,
                message: expect.stringContaining('accessKeyIdSecretRef and secretAccessKeySecretRef'),
              },
            ]
          : [],
      );
    }
  });
});
