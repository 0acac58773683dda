// Runs the real helm and kubeconform (built from the Go module proxy, see test/tools/) on the chart.
import { cp, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { kubernetesVersion } from '../../cluster/control-plane-binary.ts';
import { ensureKubeconform } from '../../cluster/go-tools.ts';
import { helm, runTool } from '../../cluster/helm.ts';
import { ensureKubernetesSchemas, writeCrdSchemas } from '../tools/kubernetes-schemas.ts';
import { chartDir, crdSourceDir } from '../tools/paths.ts';

export { helm };

export const releaseName = 'obs';
export const releaseNamespace = 'observatory-system';

/** `--set` style overrides as helm arguments (`--set-json` keeps each value's JSON type). */
export function valueArgs(values: Record<string, unknown> = {}): string[] {
  return Object.entries(values).flatMap(([key, value]) => ['--set-json', `${key}=${JSON.stringify(value)}`]);
}

/** `helm template` of the chart; rejects with helm's stderr when it fails. */
export async function template(values: Record<string, unknown> = {}, extra: string[] = []): Promise<string> {
  const result = await helm([
    'template',
    releaseName,
    chartDir,
    '--namespace',
    releaseNamespace,
    '--kube-version',
    kubernetesVersion.replace(/^v/, ''),
    ...valueArgs(values),
    ...extra,
  ]);
  if (result.code !== 0) throw new Error(result.stderr.trim() || `helm template exited ${result.code}`);
  return result.stdout;
}

export type Manifest = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; annotations?: Record<string, string> };
  // biome-ignore lint/suspicious/noExplicitAny: rendered manifests are arbitrary Kubernetes objects
  [field: string]: any;
};

export function parseManifests(text: string): Manifest[] {
  return parseAllDocuments(text)
    .map((doc) => {
      if (doc.errors.length > 0) throw new Error(doc.errors[0]!.message);
      return doc.toJS() as Manifest | null;
    })
    .filter((doc): doc is Manifest => doc !== null);
}

export async function render(values: Record<string, unknown> = {}): Promise<Manifest[]> {
  return parseManifests(await template(values));
}

export function find(manifests: Manifest[], kind: string, name?: string): Manifest {
  const found = manifests.filter((m) => m.kind === kind && (name === undefined || m.metadata.name === name));
  if (found.length !== 1)
    throw new Error(`expected one ${kind}${name ? ` ${name}` : ''}, found ${found.length}`);
  return found[0]!;
}

export interface KubeconformReport {
  code: number;
  resources: { filename: string; kind: string; name: string; version: string; status: string; msg: string }[];
  summary: { valid: number; invalid: number; errors: number; skipped: number };
  stderr: string;
}

/**
 * kubeconform -strict against the Kubernetes schemas of the local cluster's version and the
 * project's CRDs, plus the CRDs in `crdTexts` (e.g. the Prometheus Operator's).
 */
export async function kubeconform(manifests: string, crdTexts: string[] = []): Promise<KubeconformReport> {
  const schemas = await ensureKubernetesSchemas();
  const crdDir = await mkdtemp(join(tmpdir(), 'observatory-crd-schemas-'));
  try {
    const crdFiles = (await readdir(crdSourceDir)).filter((f) => f.endsWith('.yaml'));
    const crdLocation = await writeCrdSchemas(
      [...(await Promise.all(crdFiles.map((f) => readFile(join(crdSourceDir, f), 'utf8')))), ...crdTexts],
      crdDir,
    );
    const result = await runTool(
      await ensureKubeconform(),
      [
        '-strict',
        '-summary',
        '-verbose',
        '-output',
        'json',
        '-kubernetes-version',
        schemas.kubernetesVersion,
        '-schema-location',
        schemas.location,
        '-schema-location',
        crdLocation,
        '-',
      ],
      { input: manifests },
    );
    const report = JSON.parse(result.stdout) as Omit<KubeconformReport, 'code' | 'stderr'>;
    return { ...report, code: result.code, stderr: result.stderr };
  } finally {
    await rm(crdDir, { recursive: true, force: true });
  }
}

/**
 * NOTES.txt as `helm install` would print it (helm renders it only on install, which needs a
 * cluster): rendered here as a ConfigMap of a throwaway copy of the chart.
 */
export async function renderNotes(extra: string[] = []): Promise<string> {
  const copy = await mkdtemp(join(tmpdir(), 'observatory-chart-notes-'));
  try {
    await cp(chartDir, copy, { recursive: true });
    const notes = await readFile(join(copy, 'templates', 'NOTES.txt'), 'utf8');
    await writeFile(
      join(copy, 'templates', '_notes-under-test.tpl'),
      `{{- define "notes-under-test" -}}\n${notes}\n{{- end }}\n`,
    );
    await writeFile(
      join(copy, 'templates', 'notes-under-test.yaml'),
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: notes\ndata:\n  notes: |\n{{ include "notes-under-test" . | indent 4 }}\n',
    );
    const result = await helm([
      'template',
      releaseName,
      copy,
      '--namespace',
      releaseNamespace,
      '--show-only',
      'templates/notes-under-test.yaml',
      ...extra,
    ]);
    if (result.code !== 0) throw new Error(result.stderr);
    return (parse(result.stdout) as { data: { notes: string } }).data.notes;
  } finally {
    await rm(copy, { recursive: true, force: true });
  }
}

/** The example ObservabilityService manifest NOTES.txt tells the user to apply. */
export function notesExample(notes: string): string {
  const example =
    /# example-observabilityservice \(begin\)\n([\s\S]*?)# example-observabilityservice \(end\)/.exec(notes);
  if (!example) throw new Error(`NOTES.txt has no example manifest:\n${notes}`);
  return example[1]!.replace(/^ {2}/gm, '');
}
