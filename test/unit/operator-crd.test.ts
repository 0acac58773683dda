/** The CRD is generated from operator/api (one source of truth) and crds/ must be up to date. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildCrd, CRD_FILE, renderCrdYaml } from '../../operator/api/crd.ts';
import { SPEC_RULES } from '../../operator/api/rules.ts';
import type { OpenApi } from '../../operator/api/schema.ts';

const crd = buildCrd();
const version = crd.spec.versions[0]!;
const root = version.schema.openAPIV3Schema;

function walk(node: OpenApi, path: string, visit: (n: OpenApi, p: string) => void): void {
  visit(node, path);
  for (const [k, v] of Object.entries(node.properties ?? {})) walk(v, `${path}.${k}`, visit);
  if (node.items) walk(node.items, `${path}[]`, visit);
  if (node.additionalProperties) walk(node.additionalProperties, `${path}{}`, visit);
}

describe('CRD generation', () => {
  it('crds/ matches the TypeScript source (run `npm run generate:crds` after changing operator/api)', () => {
    const onDisk = readFileSync(join(import.meta.dirname, '..', '..', CRD_FILE), 'utf8');
    expect(onDisk).toBe(renderCrdYaml());
  });

  it('names the API as the architecture fixes it', () => {
    expect(crd.metadata.name).toBe('observabilityservices.observatory.dev');
    expect(crd.spec.names).toMatchObject({
      kind: 'ObservabilityService',
      plural: 'observabilityservices',
      shortNames: ['obsvc'],
    });
    expect(crd.spec.scope).toBe('Namespaced');
    expect(version).toMatchObject({
      name: 'v1alpha1',
      served: true,
      storage: true,
      subresources: { status: {} },
    });
  });

  it('has printer columns for desired mode, state, Ready, backfill progress and age', () => {
    expect(version.additionalPrinterColumns.map((c) => c.jsonPath)).toEqual(
      expect.arrayContaining([
        '.spec.writeMode',
        '.status.state',
        '.status.conditions[?(@.type=="Ready")].status',
        '.status.backfill.progress',
        '.metadata.creationTimestamp',
      ]),
    );
  });

  it('describes every spec and status field for kubectl explain', () => {
    const missing: string[] = [];
    for (const part of ['spec', 'status'] as const)
      walk(root.properties![part]!, part, (n, p) => {
        if (!n.description) missing.push(p);
      });
    expect(missing).toEqual([]);
  });

  it('bounds every string and list so the CEL cost estimate stays low', () => {
    const unbounded: string[] = [];
    walk(root.properties!.spec!, 'spec', (n, p) => {
      if (n.type === 'string' && n.enum === undefined && n.maxLength === undefined) unbounded.push(p);
      if (n.type === 'array' && n.maxItems === undefined) unbounded.push(p);
    });
    expect(unbounded).toEqual([]);
  });

  it('never takes connection settings inline: only Secret references', () => {
    const ds = root.properties!.spec!.properties!.datastores!;
    const leaves: string[] = [];
    walk(ds, 'datastores', (n, p) => {
      if (n.type !== 'object' && !/SecretRef\.(name|key)$/.test(p)) leaves.push(p);
    });
    expect(leaves.sort()).toEqual([
      'datastores.clickhouse.clusterEnabled',
      'datastores.clickhouse.clusterName',
      'datastores.clickhouse.database',
      'datastores.clickhouse.useLightweightUpdate',
    ]);
  });

  it('carries one CEL rule per forbidden combination, each with a message naming its field', () => {
    const rules = root.properties!.spec!['x-kubernetes-validations']!;
    expect(rules).toHaveLength(SPEC_RULES.length);
    for (const r of rules) {
      expect(r.message).toMatch(/spec\.\w+/);
      expect(r.fieldPath).toMatch(/^\.\w+/);
    }
    const transition = rules.filter((r) => r.rule.includes('oldSelf'));
    expect(transition.map((r) => r.fieldPath).sort()).toEqual(['.release', '.writeMode']);
  });

  it('applies the documented defaults', () => {
    const spec = root.properties!.spec!.properties!;
    expect(spec.allowPreviewOptIn!.default).toBe(true);
    expect(spec.cutover!.properties!.approval!.default).toBe('Manual');
    expect(spec.cutover!.properties!.producerQuietPeriod!.default).toBe('24h');
    expect(spec.propagation!.properties!.stuckThresholdMinutes!.default).toBe(15);
    expect(spec.writeMode!.enum).toEqual(['Legacy', 'Dual', 'EventsOnly']);
  });
});
