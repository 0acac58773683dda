/**
 * Media the SDKs upload (multi-modal inputs and outputs): the request shapes of the media API, the
 * content types it accepts and their file extensions, and how a media id and its object key follow
 * from the content. Pure. The SDKs compute the media id themselves (the first 22 characters of the
 * URL-safe base64 SHA-256 of the bytes) and write it into their media reference strings before the
 * upload happens, so the server must derive the same id, and the same bytes give the same id.
 */
import { z } from 'zod';
import { isoDateTime } from '../../kernel/iso-datetime.ts';

/** Accepted content types and the extension of their objects: the reference SDKs' list (JS 5.x, the longest). */
export const MEDIA_CONTENT_TYPES = {
  'image/png': 'png',
  'image/jpeg': 'jpeg',
  'image/jpg': 'jpg',
  'image/webp': 'webp',
  'image/gif': 'gif',
  'image/svg+xml': 'svg',
  'image/tiff': 'tiff',
  'image/bmp': 'bmp',
  'image/avif': 'avif',
  'image/heic': 'heic',
  'audio/mpeg': 'mp3',
  'audio/mp3': 'mp3',
  'audio/wav': 'wav',
  'audio/ogg': 'ogg',
  'audio/oga': 'oga',
  'audio/aac': 'aac',
  'audio/mp4': 'm4a',
  'audio/flac': 'flac',
  'audio/opus': 'opus',
  'audio/webm': 'weba',
  'video/mp4': 'mp4',
  'video/webm': 'webm',
  'video/ogg': 'ogv',
  'video/mpeg': 'mpeg',
  'video/quicktime': 'mov',
  'video/x-msvideo': 'avi',
  'video/x-matroska': 'mkv',
  'text/plain': 'txt',
  'text/html': 'html',
  'text/css': 'css',
  'text/csv': 'csv',
  'text/markdown': 'md',
  'text/x-python': 'py',
  'application/javascript': 'js',
  'text/x-typescript': 'ts',
  'application/x-yaml': 'yaml',
  'application/pdf': 'pdf',
  'application/msword': 'doc',
  'application/vnd.ms-excel': 'xls',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': 'xlsx',
  'application/zip': 'zip',
  'application/json': 'json',
  'application/xml': 'xml',
  'application/octet-stream': 'bin',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': 'docx',
  'application/vnd.openxmlformats-officedocument.presentationml.presentation': 'pptx',
  'application/rtf': 'rtf',
  'application/x-ndjson': 'ndjson',
  'application/vnd.apache.parquet': 'parquet',
  'application/gzip': 'gz',
  'application/x-tar': 'tar',
  'application/x-7z-compressed': '7z',
} as const;
export type MediaContentType = keyof typeof MEDIA_CONTENT_TYPES;
const CONTENT_TYPES = Object.keys(MEDIA_CONTENT_TYPES) as [MediaContentType, ...MediaContentType[]];

/** Fields of a trace or observation that can hold media, and of a dataset item. */
export const TRACE_MEDIA_FIELDS = ['input', 'output', 'metadata'] as const;
export const DATASET_ITEM_MEDIA_FIELDS = ['input', 'expectedOutput', 'metadata'] as const;

/** Base64 of 32 bytes: 43 characters and one `=`. */
const SHA256_BASE64 = /^[A-Za-z0-9+/]{43}=$/;

export const createMediaRequest = z
  .object({
    traceId: z.string().min(1).nullish(),
    observationId: z.string().min(1).nullish(),
    // Dataset item media (JS 5.x): the item need not exist yet.
    datasetId: z.string().min(1).nullish(),
    datasetItemId: z.string().min(1).nullish(),
    contentType: z.enum(CONTENT_TYPES, {
      message: `Invalid content type. Only supporting ${CONTENT_TYPES.join(', ')}`,
    }),
    contentLength: z.number().int().positive(),
    sha256Hash: z.string().regex(SHA256_BASE64, 'Must be a 44 character base64 encoded SHA-256 hash'),
    field: z.string(),
  })
  .superRefine((body, ctx) => {
    const forDatasetItem = body.datasetItemId != null;
    if (!forDatasetItem && body.traceId == null) {
      ctx.addIssue({ code: 'custom', path: ['traceId'], message: 'required unless datasetItemId is given' });
    }
    const fields: readonly string[] = forDatasetItem ? DATASET_ITEM_MEDIA_FIELDS : TRACE_MEDIA_FIELDS;
    if (!fields.includes(body.field)) {
      ctx.addIssue({
        code: 'custom',
        path: ['field'],
        message: `Invalid field. Only supporting ${fields.join(', ')}`,
      });
    }
  });
export type CreateMediaRequest = z.infer<typeof createMediaRequest>;

export const patchMediaRequest = z.object({
  uploadedAt: isoDateTime(),
  uploadHttpStatus: z.number().int().positive(),
  uploadHttpError: z.string().nullish(),
  uploadTimeMs: z.number().nonnegative().nullish(),
});
export type PatchMediaRequest = z.infer<typeof patchMediaRequest>;

/** The media id of content with this base64 SHA-256: its first 22 URL-safe characters (132 bits). */
export function mediaIdOf(sha256Base64: string): string {
  return sha256Base64.replaceAll('+', '-').replaceAll('/', '_').slice(0, 22);
}

/** Where a project's media object lives in the bucket: `<prefix><projectId>/<mediaId>.<extension>`. */
export function mediaObjectKey(
  prefix: string,
  projectId: string,
  mediaId: string,
  type: MediaContentType,
): string {
  return `${prefix}${projectId}/${mediaId}.${MEDIA_CONTENT_TYPES[type]}`;
}

/** An upload the SDK reported with one of these statuses put the bytes in the bucket. */
export const isUploaded = (status: number | null): boolean => status === 200 || status === 201;
