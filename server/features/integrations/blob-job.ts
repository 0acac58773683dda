/**
 * The blob-storage integrations' export: each enabled integration delivers its due windows, oldest
 * first, to its own bucket. A window's files (one per source, same rows and encoders as the
 * scheduled exports) are all written before its checkpoint moves, each to a key that follows from
 * the window alone: a worker killed mid-window rewrites the same keys on the next pass, so no
 * window is skipped and none lands twice. A storage error is recorded on the integration (the
 * storage's message; credentials are never part of it) and the window is retried next pass.
 */
import { gzipSync } from 'node:zlib';
import type { ClickHouseClient } from '@clickhouse/client';
import type pg from 'pg';
import type { ModeSettings } from '../../contract/write-modes.ts';
import type { LlmSettings } from '../../kernel/config/env.ts';
import { s3BlobStore } from '../../platform/blobs/s3.ts';
import type { BlobStore } from '../../platform/blobs/store.ts';
import { contentTypeOf } from '../exports/rules.ts';
import { windowFile } from '../exports/sources.ts';
import { checkHost, guardedAgents } from '../llm-connections/guarded-http.ts';
import { decryptSecret } from '../llm-connections/secrets.ts';
import { blobSourceRefusal, integrationKey, nextWindow, SOURCES_OF } from './rules.ts';
import { advanceCheckpoint, type BlobIntegration, deliverEach, listBlobIntegrations } from './store.ts';

/**
 * The destination's store under the outbound address policy: a literal endpoint address is
 * checked here, a host name at each connection (the address checked is the one connected to).
 */
export async function destinationOf(
  i: Pick<
    BlobIntegration,
    'bucketName' | 'region' | 'endpoint' | 'forcePathStyle' | 'accessKeyId' | 'secretAccessKeyEncrypted'
  >,
  llm: LlmSettings,
): Promise<BlobStore> {
  if (i.endpoint) await checkHost(llm, new URL(i.endpoint).hostname);
  // A sealed secret the server cannot open fails the delivery: falling back to the server's own
  // credentials would write with rights the integration was never given.
  if (!i.accessKeyId || !i.secretAccessKeyEncrypted)
    throw new Error('the integration has no credentials of its own, and the server lends none');
  if (!llm.encryptionKey)
    throw new Error('the server has no encryption key to open the stored secretAccessKey');
  const secret = decryptSecret(llm.encryptionKey, i.secretAccessKeyEncrypted);
  return s3BlobStore(
    {
      bucket: i.bucketName,
      prefix: '',
      region: i.region,
      endpoint: i.endpoint ?? undefined,
      forcePathStyle: i.forcePathStyle,
      credentials: { accessKeyId: i.accessKeyId, secretAccessKey: secret },
    },
    guardedAgents(llm),
  );
}

export interface BlobIntegrationRunOptions {
  pool: pg.Pool;
  analytics: ClickHouseClient;
  llm: LlmSettings;
  settings: ModeSettings;
  now?: () => number;
  /** Windows one integration delivers per pass, so that one long backlog does not hold the others. */
  windowsPerPass?: number;
  /** Opens an integration's storage; default: its bucket through the S3 API (`destinationOf`). */
  destination?: (i: BlobIntegration, llm: LlmSettings) => Promise<BlobStore>;
}

export interface BlobIntegrationPassResult {
  windows: number;
  files: number;
  rows: number;
  failed: { projectId: string; error: string }[];
}

async function runOne(o: BlobIntegrationRunOptions, i: BlobIntegration, r: BlobIntegrationPassResult) {
  const refusal = blobSourceRefusal(i.exportSource, o.settings);
  if (refusal !== undefined) throw new Error(refusal);
  const store = await (o.destination ?? destinationOf)(i, o.llm);
  try {
    let checkpoint = i.checkpoint.getTime();
    for (let n = 0; n < (o.windowsPerPass ?? 24); n += 1) {
      const w = nextWindow(i.exportFrequency, checkpoint, o.now?.() ?? Date.now());
      if (!w) return;
      let rows = 0;
      for (const source of SOURCES_OF[i.exportSource]) {
        const file = await windowFile(o.analytics, o.pool, source, i.fileType, i.projectId, w);
        const gzip = i.compressed && i.fileType !== 'PARQUET';
        const key = integrationKey(i, source, w);
        await store.put(key, gzip ? gzipSync(file.body) : file.body, contentTypeOf(i.fileType));
        rows += file.rows;
        r.files += 1;
      }
      const moved = await advanceCheckpoint(
        o.pool,
        'blob_storage_integrations',
        i.id,
        new Date(w.start),
        new Date(w.end),
      );
      // Another worker delivered this window first, to the same keys: its checkpoint stands.
      if (!moved) return;
      checkpoint = w.end;
      r.windows += 1;
      r.rows += rows;
    }
  } finally {
    store.close();
  }
}

/** One pass over every enabled blob-storage integration. */
export async function runBlobIntegrationPass(
  o: BlobIntegrationRunOptions,
): Promise<BlobIntegrationPassResult> {
  const r: BlobIntegrationPassResult = { windows: 0, files: 0, rows: 0, failed: [] };
  r.failed = await deliverEach(
    o.pool,
    'blob_storage_integrations',
    await listBlobIntegrations(o.pool),
    (i) => i.id,
    (i) => runOne(o, i, r),
  );
  return r;
}
