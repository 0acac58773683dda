/**
 * Which OTLP producers propagate client-side (they send the version 4 ingestion header, or are an
 * SDK major that does). In `dual` their spans are written directly; the others go through staging
 * and the server-side propagation job. Pure: no I/O.
 */

/** The SDK majors from which OTLP exports are written directly (the reference's header check). */
export const DIRECT_WRITE_SDK_MIN_MAJOR: Record<string, number> = { python: 4, javascript: 5 };

export interface OtelProducer {
  ingestionVersion?: number | undefined;
  sdkName?: string | undefined;
  sdkVersion?: string | undefined;
}

/** True when the producer declares client-side propagation (header, or a version 4 capable SDK). */
export function producerPropagatesClientSide(p: OtelProducer): boolean {
  if (p.ingestionVersion !== undefined && p.ingestionVersion >= 4) return true;
  const min = p.sdkName ? DIRECT_WRITE_SDK_MIN_MAJOR[p.sdkName.toLowerCase()] : undefined;
  if (min === undefined || !p.sdkVersion) return false;
  const major = Number.parseInt(p.sdkVersion.replace(/^v/, ''), 10);
  return Number.isInteger(major) && major >= min;
}
