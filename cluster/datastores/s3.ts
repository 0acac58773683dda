/**
 * A real S3-compatible server for the tests and the local cluster's deployments: Versity Gateway
 * (versitygw) on its POSIX backend, built once from the Go module proxy (cluster/go-tools.ts) and
 * started on a free port of the host (default loopback; a local cluster's node IP for Pods) over a
 * temporary directory. Object metadata goes to a sidecar directory, so the backend needs no
 * extended attributes on the machine's file system.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { type BlobPurpose, INGESTION_LOG_S3_ENV, S3_ENV } from '../../server/contract/env.ts';
import { ensureVersitygw } from '../go-tools.ts';
import type { DatastoreOptions } from './postgres.ts';
import { removeDirSync, startOnFreePort, startProcess, waitUntilReady } from './processes.ts';

export const S3_REGION = 'us-east-1';
const READY_TIMEOUT_MS = 30_000;

export interface S3Server {
  endpoint: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** A client with the root credentials, for the tests' own looks into the buckets. */
  client: S3Client;
  createBucket(name: string): Promise<void>;
  /** The service's variables for one bucket (media, export or the ingestion log) pointing at `bucket` here. */
  env(purpose: BlobPurpose | 'ingestionLog', bucket: string, prefix?: string): Record<string, string>;
  stop(): Promise<void>;
}

export interface S3ServerOptions extends DatastoreOptions {
  /** Where the objects are kept (in a fresh directory under it; default the system's temporary directory). */
  parentDir?: string;
}

export async function startS3Server(
  log: (line: string) => void = () => {},
  options: S3ServerOptions = {},
): Promise<S3Server> {
  const host = options.host ?? '127.0.0.1';
  const binary = await ensureVersitygw(log);
  const dir = mkdtempSync(join(options.parentDir ?? tmpdir(), 'obs-s3-'));
  const data = join(dir, 'data');
  const sidecar = join(dir, 'meta');
  mkdirSync(data);
  mkdirSync(sidecar);
  const accessKeyId = `test${randomBytes(6).toString('hex')}`;
  const secretAccessKey = randomBytes(24).toString('base64url');
  const start = async (port: number) => {
    const endpoint = `http://${host}:${port}`;
    const child = startProcess('versitygw', binary, [
      '--access',
      accessKeyId,
      '--secret',
      secretAccessKey,
      '--region',
      S3_REGION,
      '--port',
      `${host}:${port}`,
      '--quiet',
      // As S3 itself does: without it every request opens a connection of its own.
      '--keep-alive',
      'posix',
      '--sidecar',
      sidecar,
      data,
    ]);
    // Any HTTP answer (an anonymous request gets 403) means the gateway serves.
    await waitUntilReady(
      child,
      async () => (await fetch(endpoint, { signal: AbortSignal.timeout(2_000) })).status > 0,
      {
        timeoutMs: READY_TIMEOUT_MS,
      },
    );
    return { child, endpoint };
  };
  const { child, endpoint } = await startOnFreePort(host, start).catch((err: unknown) => {
    removeDirSync(dir);
    throw err;
  });
  const client = new S3Client({
    region: S3_REGION,
    endpoint,
    forcePathStyle: true,
    credentials: { accessKeyId, secretAccessKey },
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  return {
    endpoint,
    accessKeyId,
    secretAccessKey,
    client,
    async createBucket(name) {
      await client.send(new CreateBucketCommand({ Bucket: name }));
    },
    env(purpose, bucket, prefix) {
      const names = purpose === 'ingestionLog' ? INGESTION_LOG_S3_ENV : S3_ENV[purpose];
      return {
        [names.bucket]: bucket,
        [names.endpoint]: endpoint,
        [names.region]: S3_REGION,
        [names.forcePathStyle]: 'true',
        [names.accessKeyId]: accessKeyId,
        [names.secretAccessKey]: secretAccessKey,
        ...(prefix === undefined ? {} : { [names.prefix]: prefix }),
      };
    },
    async stop() {
      client.destroy();
      await child.kill('SIGTERM');
      removeDirSync(dir);
    },
  };
}
