/**
 * Media records in PostgreSQL: fixed statements, every one scoped by the caller's project. A
 * record is claimed for an upload atomically: the upsert leaves a record alone whose bytes are
 * already uploaded with the same content type, which is how a second upload of the same content
 * is de-duplicated even when two SDK processes race.
 */
import type pg from 'pg';
import { inTransaction } from '../../platform/datastores/transaction.ts';
import { type CreateMediaRequest, isUploaded, type PatchMediaRequest } from './rules.ts';

export interface MediaRecord {
  id: string;
  bucketName: string;
  bucketPath: string;
  contentType: string;
  contentLength: number;
  uploadedAt: Date | null;
  uploadHttpStatus: number | null;
  uploadHttpError: string | null;
}

interface MediaRow {
  id: string;
  bucket_name: string;
  bucket_path: string;
  content_type: string;
  content_length: string;
  uploaded_at: Date | null;
  upload_http_status: number | null;
  upload_http_error: string | null;
}

const toRecord = (r: MediaRow): MediaRecord => ({
  id: r.id,
  bucketName: r.bucket_name,
  bucketPath: r.bucket_path,
  contentType: r.content_type,
  contentLength: Number(r.content_length),
  uploadedAt: r.uploaded_at,
  uploadHttpStatus: r.upload_http_status,
  uploadHttpError: r.upload_http_error,
});

export interface MediaClaim {
  projectId: string;
  mediaId: string;
  bucketName: string;
  bucketPath: string;
  request: CreateMediaRequest;
}

/**
 * Records the media and its link to the trace or observation in one transaction. Returns whether
 * the caller must upload the bytes (false: this project already holds them under this id).
 */
export async function claimMedia(pool: pg.Pool, claim: MediaClaim): Promise<{ mustUpload: boolean }> {
  const { projectId, mediaId, request: r } = claim;
  return inTransaction(pool, async (client) => {
    const claimed = await client.query(
      `INSERT INTO media (id, project_id, sha_256_hash, bucket_name, bucket_path, content_type, content_length)
       VALUES ($1, $2, $3, $4, $5, $6, $7)
       ON CONFLICT (project_id, sha_256_hash) DO UPDATE SET
         bucket_name = EXCLUDED.bucket_name, bucket_path = EXCLUDED.bucket_path,
         content_type = EXCLUDED.content_type, content_length = EXCLUDED.content_length,
         uploaded_at = NULL, upload_http_status = NULL, upload_http_error = NULL, upload_time_ms = NULL,
         updated_at = now()
       WHERE NOT (media.upload_http_status IN (200, 201) AND media.content_type = EXCLUDED.content_type)
       RETURNING id`,
      [mediaId, projectId, r.sha256Hash, claim.bucketName, claim.bucketPath, r.contentType, r.contentLength],
    );
    if (r.traceId != null && r.observationId != null) {
      await client.query(
        `INSERT INTO observation_media (project_id, trace_id, observation_id, media_id, field)
         VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING`,
        [projectId, r.traceId, r.observationId, mediaId, r.field],
      );
    } else if (r.traceId != null) {
      await client.query(
        `INSERT INTO trace_media (project_id, trace_id, media_id, field)
         VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING`,
        [projectId, r.traceId, mediaId, r.field],
      );
    }
    return { mustUpload: (claimed.rowCount ?? 0) > 0 };
  });
}

/** Records what the SDK reports about its upload; false when the project has no such media. */
export async function recordUpload(
  pool: pg.Pool,
  projectId: string,
  mediaId: string,
  report: PatchMediaRequest,
): Promise<boolean> {
  const { rowCount } = await pool.query(
    `UPDATE media SET uploaded_at = $3, upload_http_status = $4, upload_http_error = $5, upload_time_ms = $6,
       updated_at = now()
     WHERE project_id = $1 AND id = $2`,
    [
      projectId,
      mediaId,
      new Date(report.uploadedAt),
      report.uploadHttpStatus,
      isUploaded(report.uploadHttpStatus) ? null : (report.uploadHttpError ?? null),
      report.uploadTimeMs == null ? null : Math.round(report.uploadTimeMs),
    ],
  );
  return (rowCount ?? 0) > 0;
}

export async function findMedia(pool: pg.Pool, projectId: string, mediaId: string) {
  const { rows } = await pool.query<MediaRow>(
    `SELECT id, bucket_name, bucket_path, content_type, content_length::text AS content_length,
       uploaded_at, upload_http_status, upload_http_error
     FROM media WHERE project_id = $1 AND id = $2`,
    [projectId, mediaId],
  );
  return rows[0] && toRecord(rows[0]);
}
