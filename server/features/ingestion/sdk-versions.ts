/**
 * The SDK version rules of the spec's Limits and Errors tables: which producers are written in
 * real time, which are delayed (staged through dual write), and which `events_only` refuses.
 * Versions compare as full semantic versions, pre-releases included (4.7.0-rc.1 is below 4.7.0);
 * the Python SDKs' PEP 440 spellings (4.7.0rc1, 4.7.0b2, 4.7.0.dev1, 4.6.1.post1) are read as
 * their semantic equivalents. Pure: no I/O.
 */
import semver from 'semver';

export type SdkFamily = 'python' | 'js';

/**
 * - `real-time`: Python >= 4.7.0, JS/TS >= 5.4.0: written directly, no dual-write delay.
 * - `delayed`: Python 4.0.0 to 4.6.x, JS/TS 5.0.0 to 5.3.x: accepted, staged through dual write.
 * - `older`: between the refused and the delayed ones (Python 3.x, JS/TS 4.x, and pre-releases of
 *   the first delayed version): neither list of the spec names them; like delayed producers they
 *   do not propagate client-side, so they are staged, and events_only does not refuse them.
 * - `refused`: Python v2 or older, JS/TS v3 or older: rejected at ingestion in events_only.
 * - `unknown`: not a Python or JS/TS SDK of the reference, or a version that cannot be read.
 */
export type SdkTier = 'real-time' | 'delayed' | 'older' | 'refused' | 'unknown';

interface FamilyRules {
  /** First real-time version. */
  realTimeFrom: string;
  /** First delayed version. */
  delayedFrom: string;
  /** First version events_only accepts: the lowest version of the next major, its pre-releases included. */
  acceptedFrom: string;
}

export const SDK_RULES: Record<SdkFamily, FamilyRules> = {
  python: { realTimeFrom: '4.7.0', delayedFrom: '4.0.0', acceptedFrom: '3.0.0-0' },
  js: { realTimeFrom: '5.4.0', delayedFrom: '5.0.0', acceptedFrom: '4.0.0-0' },
};

/** The names the reference SDKs send in `x-*-sdk-name` (the batch body's `sdk_name` alike). */
const FAMILY_OF_NAME: Record<string, SdkFamily> = {
  python: 'python',
  'langfuse-python': 'python',
  javascript: 'js',
  'langfuse-js': 'js',
  js: 'js',
  typescript: 'js',
};

export function sdkFamily(name: string | undefined): SdkFamily | undefined {
  return name === undefined ? undefined : FAMILY_OF_NAME[name.trim().toLowerCase()];
}

const PEP440 =
  /^(\d+)\.(\d+)(?:\.(\d+))?(?:[-_.]?(a|alpha|b|beta|c|rc|pre|preview)[-_.]?(\d*))?(?:[-_.]?(?:post|rev|r)[-_.]?\d*)?(?:[-_.]?dev[-_.]?(\d*))?(?:\+[a-z0-9.]+)?$/i;

const PRE_LABEL: Record<string, string> = {
  a: 'a',
  alpha: 'a',
  b: 'b',
  beta: 'b',
  c: 'rc',
  rc: 'rc',
  pre: 'rc',
  preview: 'rc',
};

/**
 * The semantic version a version string stands for, or undefined when it is not one. JS/TS SDKs
 * are versioned by npm, so strictly semantic; Python SDKs by PEP 440, whose pre-releases keep
 * their order (a < b < rc < release), whose dev releases sort below every pre-release of their
 * version, and whose post releases and local labels do not change the release.
 */
export function parseSdkVersion(raw: string | undefined, family: SdkFamily): string | undefined {
  if (raw === undefined) return undefined;
  const text = raw.trim().replace(/^v/i, '');
  if (text.length === 0 || text.length > 64) return undefined;
  const exact = semver.valid(text);
  if (exact || family === 'js') return exact ?? undefined;
  const m = PEP440.exec(text);
  if (!m) return undefined;
  const [, major, minor, patch = '0', pre, preNumber, dev] = m;
  const release = `${Number(major)}.${Number(minor)}.${Number(patch)}`;
  let prerelease: string[] = [];
  if (pre) prerelease = [PRE_LABEL[pre.toLowerCase()]!, String(Number(preNumber || '0'))];
  if (dev !== undefined)
    prerelease = prerelease.length
      ? [...prerelease, 'dev', String(Number(dev || '0'))]
      : ['0', 'dev', String(Number(dev || '0'))];
  return semver.valid(prerelease.length ? `${release}-${prerelease.join('.')}` : release) ?? undefined;
}

/** Where an SDK of this name and version stands in the spec's rules. */
export function sdkTier(name: string | undefined, version: string | undefined): SdkTier {
  const family = sdkFamily(name);
  const parsed = family && parseSdkVersion(version, family);
  if (!family || !parsed) return 'unknown';
  const rules = SDK_RULES[family];
  if (semver.gte(parsed, rules.realTimeFrom)) return 'real-time';
  if (semver.gte(parsed, rules.delayedFrom)) return 'delayed';
  if (semver.gte(parsed, rules.acceptedFrom)) return 'older';
  return 'refused';
}

/** What a request says about its producer (headers in any accepted spelling). */
export interface Producer {
  /** `x-*-ingestion-version`, parsed. */
  ingestionVersion?: number | undefined;
  sdkName?: string | undefined;
  sdkVersion?: string | undefined;
}

/** The version 4 ingestion marker (`x-service-ingestion-version: 4`) declares client-side propagation. */
export const REAL_TIME_INGESTION_VERSION = 4;

/** True when the producer's spans may be written directly: the marker header, or a real-time SDK. */
export function isRealTimeProducer(p: Producer): boolean {
  if (p.ingestionVersion !== undefined && p.ingestionVersion >= REAL_TIME_INGESTION_VERSION) return true;
  return sdkTier(p.sdkName, p.sdkVersion) === 'real-time';
}

/** True when events_only rejects this producer at ingestion (Python v2 or older, JS/TS v3 or older). */
export function isRefusedInEventsOnly(p: Producer): boolean {
  return sdkTier(p.sdkName, p.sdkVersion) === 'refused';
}

/** The sentence a refused producer is told: its SDK, and the versions that write in real time. */
export function refusalReason(p: Producer): string {
  const family = sdkFamily(p.sdkName);
  const sdk = family === 'python' ? 'Python SDK' : 'JS/TS SDK';
  return (
    `${sdk} ${p.sdkVersion ?? ''} is not supported in write mode events_only (Python SDK v2 or older and ` +
    `JS/TS SDK v3 or older are rejected). Upgrade to an OpenTelemetry-based SDK (Python SDK >= ` +
    `${SDK_RULES.python.realTimeFrom} or JS/TS SDK >= ${SDK_RULES.js.realTimeFrom}), or have the service operator run write mode dual until ` +
    'every producer has moved.'
  );
}
