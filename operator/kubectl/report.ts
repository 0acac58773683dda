/**
 * What `kubectl observatory report` writes: a support bundle of one ObservabilityService, as files
 * (pure). The object, the Events of it and of its children, every object it owns directly or
 * through another (Deployments, ReplicaSets, Jobs, Pods, Services, ConfigMaps, budgets), the logs of
 * its Jobs' Pods and what its worker Pods report. Secrets appear only as their names and keys; and
 * any text equal to or containing a Secret's value (raw or base64) is replaced wherever it occurs
 * (a ConfigMap, a literal env value, a log line, an Event), so the bundle can be shared.
 */
import type { V1Pod, V1Secret } from '@kubernetes/client-node';
import { stringify } from 'yaml';
import type { ObservabilityService } from '../api/v1alpha1.ts';
import { COMPONENT } from '../runtime/observe.ts';

export const REDACTED = '[REDACTED]';

/** Values this short are replaced only where a whole field equals them: inside text they are noise. */
const MIN_SCRUBBED_SUBSTRING = 4;

/** A namespaced object as listed (any kind), with the fields the bundle reads. */
export interface Listed {
  kind?: string;
  metadata?: {
    name?: string;
    uid?: string;
    ownerReferences?: { uid: string }[];
    managedFields?: unknown;
    [k: string]: unknown;
  };
  [k: string]: unknown;
}

export interface EventLike extends Listed {
  involvedObject?: { uid?: string };
}

export interface PodLog {
  pod: string;
  container: string;
  /** The log, or why it could not be read. */
  text: string;
}

export interface WorkerAnswer {
  pod: string;
  /** `health`, `producers`, `backfill`: the worker path it answered. */
  report: string;
  /** The parsed body, or why there was none. */
  body: unknown;
}

export interface ReportInput {
  object: ObservabilityService;
  /** Every object of the namespace the bundle may hold, by kind. */
  objects: Listed[];
  events: EventLike[];
  /** Every Secret the user may read in the namespace: their values are scrubbed everywhere. */
  secrets: V1Secret[];
  logs: PodLog[];
  worker: WorkerAnswer[];
  /** What could not be read (no access), listed in the index. */
  unreadable: string[];
  createdAt: string;
}

export interface BundleFile {
  path: string;
  content: string;
}

/** The uids of the object and everything owned by it, transitively (a Deployment's ReplicaSets' Pods). */
export function ownedUids(root: string, objects: readonly Listed[]): Set<string> {
  const owned = new Set([root]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const o of objects) {
      const uid = o.metadata?.uid;
      if (!uid || owned.has(uid)) continue;
      if ((o.metadata?.ownerReferences ?? []).some((r) => owned.has(r.uid))) {
        owned.add(uid);
        grew = true;
      }
    }
  }
  return owned;
}

/** The password of a URL-shaped value (a datastore URL), raw and decoded: it leaks on its own too. */
function urlPasswords(value: string): string[] {
  if (!URL.canParse(value)) return [];
  const { password } = new URL(value);
  if (!password) return [];
  try {
    return [password, decodeURIComponent(password)];
  } catch {
    return [password];
  }
}

/** Every value of the Secrets as stored (base64) and decoded, and their URLs' passwords, longest first. */
export function secretValues(secrets: readonly V1Secret[]): string[] {
  const values = new Set<string>();
  const add = (plain: string, encoded: string) => {
    for (const v of [plain, encoded, ...urlPasswords(plain)]) values.add(v);
  };
  for (const s of secrets) {
    for (const encoded of Object.values(s.data ?? {}))
      add(Buffer.from(encoded, 'base64').toString('utf8'), encoded);
    for (const plain of Object.values(s.stringData ?? {}))
      add(plain, Buffer.from(plain, 'utf8').toString('base64'));
  }
  values.delete('');
  return [...values].sort((a, b) => b.length - a.length);
}

/** Replaces the values in a text: the whole text when it equals one, else each occurrence of the longer ones. */
export function scrubText(text: string, values: readonly string[]): string {
  if (values.includes(text)) return REDACTED;
  let out = text;
  for (const v of values) if (v.length >= MIN_SCRUBBED_SUBSTRING) out = out.replaceAll(v, REDACTED);
  return out;
}

/** The same on every string (and map key) of a value. */
export function scrub(value: unknown, values: readonly string[]): unknown {
  if (typeof value === 'string') return scrubText(value, values);
  // client-node parses timestamps into Dates: kept as the API wrote them.
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return value.map((v) => scrub(v, values));
  if (value && typeof value === 'object')
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [scrubText(k, values), scrub(v, values)]),
    );
  return value;
}

/** A Secret as the bundle shows it: its metadata and the names of its keys, never a value. */
export function redactSecret(s: V1Secret): unknown {
  const keys = [...Object.keys(s.data ?? {}), ...Object.keys(s.stringData ?? {})];
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: withoutNoise(s.metadata ?? {}),
    type: s.type,
    data: Object.fromEntries(keys.map((k) => [k, REDACTED])),
  };
}

/** managedFields are bulky and say nothing about the object's state; the last-applied annotation repeats it. */
function withoutNoise<T extends object>(metadata: T): T {
  const { managedFields: _m, ...rest } = metadata as T & { managedFields?: unknown };
  const annotations = (rest as { annotations?: Record<string, string> }).annotations;
  if (!annotations?.['kubectl.kubernetes.io/last-applied-configuration']) return rest as T;
  const { 'kubectl.kubernetes.io/last-applied-configuration': _l, ...kept } = annotations;
  return { ...rest, annotations: kept } as T;
}

const clean = (o: Listed): Listed => ({ ...o, metadata: withoutNoise(o.metadata ?? {}) });

/** A file name part: no path separators or dots a path could climb with. */
const safe = (s: string) => s.replace(/[^A-Za-z0-9._-]/g, '_').replace(/^\.+/, '_');

/** The names of the Secrets the object's spec and its owned objects refer to. */
export function referencedSecrets(values: readonly unknown[]): Set<string> {
  const names = new Set<string>();
  const walk = (v: unknown, parent: string | undefined) => {
    if (Array.isArray(v)) for (const x of v) walk(x, parent);
    else if (v && typeof v === 'object') {
      const r = v as Record<string, unknown>;
      if (typeof r['name'] === 'string' && parent && /secret/i.test(parent)) names.add(r['name']);
      if (typeof r['secretName'] === 'string') names.add(r['secretName']);
      for (const [k, x] of Object.entries(r)) walk(x, k);
    }
  };
  for (const v of values) walk(v, undefined);
  return names;
}

export function buildBundle(input: ReportInput): BundleFile[] {
  const values = secretValues(input.secrets);
  const o = input.object;
  const owned = ownedUids(o.metadata.uid, input.objects);
  const children = input.objects
    .filter((c) => c.metadata?.uid && c.metadata.uid !== o.metadata.uid && owned.has(c.metadata.uid))
    .map(clean);
  const referenced = referencedSecrets([o.spec, ...children]);
  const secrets = input.secrets.filter(
    (s) =>
      referenced.has(s.metadata?.name ?? '') ||
      (s.metadata?.ownerReferences ?? []).some((r) => owned.has(r.uid)),
  );
  const events = input.events
    .filter((e) => owned.has(e.involvedObject?.uid ?? ''))
    .map(clean)
    .sort((a, b) => String(a['lastTimestamp'] ?? '').localeCompare(String(b['lastTimestamp'] ?? '')));
  const yamlOf = (v: unknown) => stringify(scrub(v, values), { aliasDuplicateObjects: false });

  const files: BundleFile[] = [
    { path: 'observabilityservice.yaml', content: yamlOf({ ...o, metadata: withoutNoise(o.metadata) }) },
    { path: 'events.yaml', content: yamlOf(events) },
    ...children.map((c) => ({
      path: `objects/${safe(c.kind ?? 'Unknown')}/${safe(c.metadata?.name ?? c.metadata?.uid ?? '')}.yaml`,
      content: yamlOf(c),
    })),
    ...secrets.map((s) => ({
      path: `objects/Secret/${safe(s.metadata?.name ?? '')}.yaml`,
      content: stringify(redactSecret(s)),
    })),
    ...input.logs.map((l) => ({
      path: `logs/${safe(l.pod)}/${safe(l.container)}.log`,
      content: scrubText(l.text, values),
    })),
    ...input.worker.map((w) => ({
      path: `worker/${safe(w.pod)}/${safe(w.report)}.json`,
      content: `${JSON.stringify(scrub(w.body, values), null, 2)}\n`,
    })),
  ];
  const index = {
    object: { namespace: o.metadata.namespace, name: o.metadata.name, uid: o.metadata.uid },
    createdAt: input.createdAt,
    objects: [
      ...children.map((c) => `${c.kind}/${c.metadata?.name}`),
      ...secrets.map((s) => `Secret/${s.metadata?.name} (keys only)`),
    ].sort(),
    events: events.length,
    logs: input.logs.map((l) => `${l.pod}/${l.container}`),
    worker: input.worker.map((w) => `${w.pod} ${w.report}`),
    redaction: `Secret values (raw and base64) of ${input.secrets.length} readable Secrets are replaced by ${REDACTED} in every file`,
    unreadable: input.unreadable,
    files: files.map((f) => f.path),
  };
  return [{ path: 'index.json', content: `${JSON.stringify(scrub(index, values), null, 2)}\n` }, ...files];
}

/**
 * The Pods whose logs the bundle holds (those of the object's Jobs: preflight, schema, backfill),
 * with their containers, and the worker Pods asked for their reports.
 */
export function podsToRead(
  o: ObservabilityService,
  objects: readonly Listed[],
): { logs: { pod: string; containers: string[] }[]; workers: string[] } {
  const owned = ownedUids(o.metadata.uid, objects);
  const jobs = new Set(
    objects.filter((j) => j.kind === 'Job' && owned.has(j.metadata?.uid ?? '')).map((j) => j.metadata?.uid),
  );
  const pods = objects.filter((p) => p.kind === 'Pod' && owned.has(p.metadata?.uid ?? '')) as (Listed &
    V1Pod)[];
  return {
    logs: pods
      .filter((p) => (p.metadata?.ownerReferences ?? []).some((r) => jobs.has(r.uid)))
      .map((p) => ({
        pod: p.metadata?.name ?? '',
        containers: [...(p.spec?.initContainers ?? []), ...(p.spec?.containers ?? [])].map((c) => c.name),
      })),
    workers: pods
      .filter((p) => p.metadata?.labels?.[COMPONENT] === 'worker' && p.status?.phase === 'Running')
      .map((p) => p.metadata?.name ?? ''),
  };
}
