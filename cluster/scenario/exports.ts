/**
 * Scheduled exports in the upgrade walk on the local cluster: an S3 server (Versity Gateway) on the
 * node IP, published in the namespace as the Service `s3` (an EndpointSlice naming the node IP, like
 * the datastores) with its keys in the Secret `blob-storage` that `spec.blobStorage.exports`
 * references; spans sent by an OTel exporter at known times in closed hourly windows; the exports
 * API of the web Pods; and the files the worker Pods wrote, read back from the bucket.
 */
import { GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { stringify } from 'yaml';
import { S3_REGION, type S3Server, startS3Server } from '../datastores/s3.ts';
import { waitFor } from '../wait.ts';
import { datastoreServices, type LocalDeployment } from './local-deployment.ts';
import { type Platform, type Project, withOtlpTracer } from './scenario.ts';

export const HOUR = 3_600_000;
const BUCKET = 'exports';
const PREFIX = 'exports/';
const SECRET = 'blob-storage';

export interface ExportBucket {
  s3: S3Server;
  /** `spec.blobStorage` pointing the worker and web Pods at the bucket. */
  blobStorage: Record<string, unknown>;
  /** Keys under `<prefix><projectId>/<exportId>/`, in order. */
  files(projectId: string, exportId: string): Promise<string[]>;
  text(key: string): Promise<string>;
  stop(): Promise<void>;
}

export async function startExportBucket(d: LocalDeployment): Promise<ExportBucket> {
  const s3 = await startS3Server(() => {}, { host: d.cluster.nodeIP });
  try {
    await s3.createBucket(BUCKET);
    const services = datastoreServices(d.ns, d.cluster.nodeIP, {
      s3: { port: 9000, hostPort: Number(new URL(s3.endpoint).port) },
    });
    await d.cluster.kubectl(['apply', '-f', '-'], services.map((o) => stringify(o)).join('---\n'));
    await d.core().createNamespacedSecret({
      namespace: d.ns,
      body: {
        metadata: { name: SECRET },
        stringData: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
      },
    });
  } catch (err) {
    await s3.stop();
    throw err;
  }
  return {
    s3,
    blobStorage: {
      exports: {
        bucket: BUCKET,
        prefix: PREFIX,
        region: S3_REGION,
        endpoint: `http://s3.${d.ns}.svc.cluster.local:9000`,
        forcePathStyle: true,
        accessKeyIdSecretRef: { name: SECRET, key: 'accessKeyId' },
        secretAccessKeySecretRef: { name: SECRET, key: 'secretAccessKey' },
        // Passes a few seconds apart, so the walk does not wait a minute for each.
        intervalSeconds: 2,
      },
    },
    async files(projectId, exportId) {
      const out = await s3.client.send(
        new ListObjectsV2Command({ Bucket: BUCKET, Prefix: `${PREFIX}${projectId}/${exportId}/` }),
      );
      return (out.Contents ?? []).map((o) => o.Key!).sort();
    },
    async text(key) {
      const out = await s3.client.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }));
      return out.Body!.transformToString();
    },
    stop: () => s3.stop(),
  };
}

export interface TimedSpan {
  traceId: string;
  spanId: string;
  name: string;
  time: number;
}

/** One root span per time through the OTLP/HTTP protobuf exporter, started at that time (5 ms long). */
export function sendSpansAt(url: string, project: Project, times: number[]): Promise<TimedSpan[]> {
  return withOtlpTracer(url, project, 'scenario-exports', (tracer) =>
    times.map((time, i) => {
      const name = `export-${i}-${new Date(time).toISOString()}`;
      const span = tracer.startSpan(name, { startTime: new Date(time) });
      span.end(new Date(time + 5));
      return { traceId: span.spanContext().traceId, spanId: span.spanContext().spanId, name, time };
    }),
  );
}

export interface ExportState {
  id: string;
  source: string;
  checkpoint: string;
  windowsWritten: number;
  rowsWritten: number;
  lastSkipReason: string | null;
  files: string[];
}

async function call<T>(p: Platform, project: Project, method: string, path: string, body?: unknown) {
  const auth = Buffer.from(`${project.publicKey}:${project.secretKey}`).toString('base64');
  const res = await fetch(`${await p.webUrl()}${path}`, {
    method,
    headers: { authorization: `Basic ${auth}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
    signal: AbortSignal.timeout(30_000),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return JSON.parse(text) as T;
}

/** An hourly JSONL export of `source` from the window holding `startAt`, through the public API. */
export const createExport = (p: Platform, project: Project, source: string, startAt: number) =>
  call<ExportState>(p, project, 'POST', '/api/public/exports', {
    source,
    format: 'JSONL',
    frequency: 'hourly',
    startAt: new Date(startAt).toISOString(),
  });

export const getExport = (p: Platform, project: Project, id: string) =>
  call<ExportState>(p, project, 'GET', `/api/public/exports/${id}`);

/** Polls the export until `check` holds (the worker runs a pass every two seconds). */
export function waitForExport(
  p: Platform,
  project: Project,
  id: string,
  what: string,
  check: (e: ExportState) => boolean,
): Promise<ExportState> {
  return waitFor(
    what,
    async () => {
      const e = await getExport(p, project, id);
      return check(e) ? e : undefined;
    },
    { timeoutMs: 120_000, intervalMs: 1_000 },
  );
}

/** Rows of a JSONL file; the store's `YYYY-MM-DD hh:mm:ss.fff` UTC times as epoch ms. */
export function jsonlRows(text: string): Record<string, unknown>[] {
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

export const storeTime = (v: unknown) => Date.parse(`${String(v).replace(' ', 'T')}Z`);

/** The key of window `w` (hours after `t0`) of an export, as the worker names it. */
export function windowFile(projectId: string, exportId: string, source: string, t0: number, w: number) {
  const stamp = (ms: number) => new Date(ms).toISOString().replace(/[-:]/g, '').replace('.000Z', 'Z');
  return `${PREFIX}${projectId}/${exportId}/${source.toLowerCase()}/${stamp(t0 + w * HOUR)}_${stamp(t0 + (w + 1) * HOUR)}.jsonl`;
}

/** The end of the window a file holds, from its key `..._<end>.<ext>`. */
export function windowEndOf(key: string): number {
  const m = /_(\d{4})(\d\d)(\d\d)T(\d\d)(\d\d)(\d\d)Z\.\w+$/.exec(key);
  if (!m) throw new Error(`not an export window key: ${key}`);
  const [year, month, day, hour, minute, second] = m.slice(1).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  return Date.UTC(year, month - 1, day, hour, minute, second);
}
