// Copies the generated CustomResourceDefinitions (crds/*.yaml, the single source, generated from
// operator/api) into the Helm chart as templates, the way CloudNativePG's chart ships them:
// charts/observatory/templates/crds/<same file name>, wrapped in `{{- if .Values.crds.create }}`
// and annotated helm.sh/resource-policy: keep, so `helm upgrade` updates the schema and
// `helm uninstall` leaves the CRD (and every custom resource) in place.
//
//   node scripts/sync-chart-crds.ts          write the chart's copies
//   node scripts/sync-chart-crds.ts --check  exit 1 when they are stale (what the chart test asserts)
import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const crdSourceDir = join(repoRoot, 'crds');
export const chartCrdDir = join(repoRoot, 'charts', 'observatory', 'templates', 'crds');

/** Text that Go's text/template would take for an action is written as a template string literal. */
function escapeTemplateDelimiters(text: string): string {
  return text.replaceAll('{{', '{{ "{{" }}');
}

/** The chart template for one generated CRD file. */
export function chartCrdTemplate(fileName: string, source: string): string {
  const docs = parseAllDocuments(source);
  const out: string[] = [];
  for (const doc of docs) {
    if (doc.errors.length > 0) throw new Error(`${fileName}: ${doc.errors[0]!.message}`);
    if (doc.get('kind') !== 'CustomResourceDefinition') {
      throw new Error(
        `${fileName}: expected only CustomResourceDefinitions, found ${String(doc.get('kind'))}`,
      );
    }
    // The generator's header comment says "do not edit"; the copy says where it comes from instead.
    doc.setIn(['metadata', 'annotations', 'helm.sh/resource-policy'], 'keep');
    const text = doc.toString({ lineWidth: 0 }).replace(/^---\n/, '');
    out.push(text.replace(/^(#.*\n)+/, ''));
  }
  return [
    `{{- /* Copied from crds/${fileName} by \`npm run chart:sync-crds\`; do not edit (the source is generated from operator/api). */ -}}`,
    '{{- if .Values.crds.create }}',
    ...out.map((doc, index) => (index === 0 ? '' : '---\n') + escapeTemplateDelimiters(doc).trimEnd()),
    '{{- end }}',
    '',
  ].join('\n');
}

/** What templates/crds/ must contain: file name -> content. */
export async function expectedChartCrds(sourceDir = crdSourceDir): Promise<Map<string, string>> {
  const files = (await readdir(sourceDir)).filter((f) => f.endsWith('.yaml')).sort();
  if (files.length === 0)
    throw new Error(`no CRD files in ${sourceDir}: run \`npm run generate:crds\` first`);
  const result = new Map<string, string>();
  for (const file of files) {
    result.set(basename(file), chartCrdTemplate(file, await readFile(join(sourceDir, file), 'utf8')));
  }
  return result;
}

/** Files in the chart that differ from, are missing from, or are not in the expected set. */
export async function staleChartCrds(sourceDir = crdSourceDir, chartDir = chartCrdDir): Promise<string[]> {
  const expected = await expectedChartCrds(sourceDir);
  const present = (await readdir(chartDir).catch(() => [] as string[])).filter((f) => f.endsWith('.yaml'));
  const stale = present.filter((f) => !expected.has(f));
  for (const [file, content] of expected) {
    const actual = await readFile(join(chartDir, file), 'utf8').catch(() => undefined);
    if (actual !== content) stale.push(file);
  }
  return stale.sort();
}

export async function syncChartCrds(sourceDir = crdSourceDir, chartDir = chartCrdDir): Promise<string[]> {
  const expected = await expectedChartCrds(sourceDir);
  const changed = await staleChartCrds(sourceDir, chartDir);
  for (const file of changed) {
    const content = expected.get(file);
    if (content === undefined) await rm(join(chartDir, file));
    else await writeFile(join(chartDir, file), content);
  }
  return changed;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const check = process.argv.includes('--check');
  const changed = check ? await staleChartCrds() : await syncChartCrds();
  if (changed.length === 0) console.log('chart CRDs are up to date');
  else if (check) {
    console.error(`stale chart CRDs (run \`npm run chart:sync-crds\`): ${changed.join(', ')}`);
    process.exitCode = 1;
  } else
    console.log(`updated ${changed.map((f) => join('charts/observatory/templates/crds', f)).join(', ')}`);
}
