// The chart ships the generated CRD (crds/, the single source) CloudNativePG-style: as a template
// behind crds.create, annotated helm.sh/resource-policy: keep. A stale copy fails here.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { chartCrdDir, staleChartCrds } from '../../scripts/sync-chart-crds.ts';
import { crdSourceDir } from '../tools/paths.ts';
import { render } from './helm.ts';

async function sourceCrds() {
  const files = (await readdir(crdSourceDir)).filter((f) => f.endsWith('.yaml')).sort();
  const docs = await Promise.all(
    files.map(async (f) => parseAllDocuments(await readFile(join(crdSourceDir, f), 'utf8'))),
  );
  return docs
    .flat()
    .map((doc) => doc.toJS() as { metadata: { name: string; annotations?: Record<string, string> } });
}

describe('CRDs in the chart', () => {
  it('the chart copy is fresh (`npm run chart:sync-crds` after `npm run generate:crds`)', async () => {
    expect(await staleChartCrds()).toEqual([]);
    expect((await readdir(chartCrdDir)).sort()).toEqual(
      (await readdir(crdSourceDir)).filter((f) => f.endsWith('.yaml')).sort(),
    );
  });

  it('renders each generated CRD unchanged but for the keep annotation', async () => {
    const rendered = (await render()).filter((m) => m.kind === 'CustomResourceDefinition');
    const expected = (await sourceCrds()).map((crd) => ({
      ...crd,
      metadata: {
        ...crd.metadata,
        annotations: { ...crd.metadata.annotations, 'helm.sh/resource-policy': 'keep' },
      },
    }));
    expect(rendered).toEqual(expected);
  });

  it('crds.create=false leaves them out', async () => {
    expect(
      (await render({ 'crds.create': false })).filter((m) => m.kind === 'CustomResourceDefinition'),
    ).toEqual([]);
  });
});
