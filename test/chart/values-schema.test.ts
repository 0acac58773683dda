// values.schema.json refuses unknown keys at every level and wrong types, and helm says which key.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { chartDir } from '../tools/paths.ts';
import { find, releaseName, render, template } from './helm.ts';

type JsonSchema = { [key: string]: unknown };

async function refusal(values: Record<string, unknown>): Promise<string> {
  try {
    await template(values);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error(`helm template accepted ${JSON.stringify(values)}`);
}

describe('values.schema.json', () => {
  it.each([
    ['an unknown top-level key', { replicas: 2 }, /additional properties 'replicas' not allowed/],
    [
      'an unknown nested key (a typo)',
      { 'rbac.clusterwide': true },
      /at '\/rbac'.*additional properties 'clusterwide'/,
    ],
    [
      'an unknown key two levels down',
      { 'metrics.service.type': 'NodePort' },
      /at '\/metrics\/service'.*'type' not allowed/,
    ],
    ['a string for an integer', { replicaCount: 'two' }, /at '\/replicaCount'.*got string, want integer/],
    ['a string for a boolean', { 'crds.create': 'yes' }, /at '\/crds\/create'.*got string, want boolean/],
    ['an unknown pull policy', { 'image.pullPolicy': 'Sometimes' }, /at '\/image\/pullPolicy'/],
    [
      'a malformed resource quantity',
      { 'resources.limits': { memory: 'lots' } },
      /at '\/resources\/limits\/memory'/,
    ],
    [
      'running as root',
      { 'podSecurityContext.runAsNonRoot': false },
      /at '\/podSecurityContext\/runAsNonRoot'/,
    ],
    [
      'removing runAsNonRoot',
      { 'securityContext.runAsNonRoot': null },
      /at '\/securityContext'.*runAsNonRoot/,
    ],
    [
      'overriding a variable the chart sets',
      { 'operator.extraEnv': [{ name: 'OPERATOR_WATCH_NAMESPACE', value: 'x' }] },
      /at '\/operator\/extraEnv\/0\/name'/,
    ],
    [
      "a volume named like the chart's scratch volume",
      { 'operator.extraVolumes': [{ name: 'tmp', emptyDir: {} }] },
      /at '\/operator\/extraVolumes\/0\/name'/,
    ],
    [
      'a volume of two kinds at once',
      { 'operator.extraVolumes': [{ name: 'ca', secret: { secretName: 'ca' }, emptyDir: {} }] },
      /at '\/operator\/extraVolumes\/0'/,
    ],
    [
      "a mount over the chart's /tmp",
      { 'operator.extraVolumeMounts': [{ name: 'ca', mountPath: '/tmp' }] },
      /at '\/operator\/extraVolumeMounts\/0\/mountPath'/,
    ],
    [
      'a relative mount path',
      { 'operator.extraVolumeMounts': [{ name: 'ca', mountPath: 'etc/ca' }] },
      /at '\/operator\/extraVolumeMounts\/0\/mountPath'/,
    ],
    [
      'an envFrom entry without a source',
      { 'operator.extraEnvFrom': [{ prefix: 'X_' }] },
      /at '\/operator\/extraEnvFrom\/0'/,
    ],
    [
      'NODE_OPTIONS through extraEnv (operator.nodeOptions sets it)',
      { 'operator.extraEnv': [{ name: 'NODE_OPTIONS', value: '--max-old-space-size=64' }] },
      /at '\/operator\/extraEnv\/0\/name'/,
    ],
    ['no malloc arena', { 'operator.mallocArenaMax': 0 }, /at '\/operator\/mallocArenaMax'/],
    ['an invalid namespace name', { 'operator.watchNamespace': 'Team_A' }, /at '\/operator\/watchNamespace'/],
    [
      'a misspelt affinity operator',
      {
        'affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms': [
          { matchExpressions: [{ key: 'kubernetes.io/os', operator: 'Inn', values: ['linux'] }] },
        ],
      },
      /at '\/affinity\/nodeAffinity\/requiredDuringSchedulingIgnoredDuringExecution\/nodeSelectorTerms\/0\/matchExpressions\/0\/operator'/,
    ],
    [
      'a spread constraint without its topology key',
      { topologySpreadConstraints: [{ maxSkew: 1, whenUnsatisfiable: 'ScheduleAnyway' }] },
      /at '\/topologySpreadConstraints\/0'.*topologyKey/,
    ],
  ])('refuses %s, naming the key', async (_label, values, message) => {
    expect(await refusal(values)).toMatch(message);
  });

  it('refuses in operator.extraEnv every variable the chart itself sets, with every option on', async () => {
    const deployment = find(
      await render({ 'metrics.service.create': true, 'leaderElection.enabled': true }),
      'Deployment',
      `${releaseName}-observatory`,
    );
    const names = (deployment.spec.template.spec.containers[0].env as { name: string }[]).map((e) => e.name);
    expect(names.length).toBeGreaterThan(5);
    for (const name of names) {
      expect(await refusal({ 'operator.extraEnv': [{ name, value: 'x' }] })).toMatch(
        /at '\/operator\/extraEnv\/0\/name'/,
      );
    }
  });

  it('every object either lists its keys and refuses others, or is a map with typed values', async () => {
    const schema = JSON.parse(await readFile(join(chartDir, 'values.schema.json'), 'utf8')) as JsonSchema;
    const problems: string[] = [];
    const visit = (node: unknown, path: string) => {
      if (typeof node !== 'object' || node === null) return;
      if (Array.isArray(node)) {
        node.forEach((item, i) => {
          visit(item, `${path}[${i}]`);
        });
        return;
      }
      const s = node as JsonSchema;
      if (s['type'] === 'object' || 'properties' in s) {
        if ('properties' in s && s['additionalProperties'] !== false)
          problems.push(`${path}: keys not closed`);
        if (!('properties' in s) && typeof s['additionalProperties'] !== 'object')
          problems.push(`${path}: untyped map`);
      }
      for (const [key, value] of Object.entries(s)) visit(value, `${path}/${key}`);
    };
    visit(schema, '#');
    expect(problems).toEqual([]);
  });

  it('documents and accepts every default in values.yaml (and nothing the schema does not know)', async () => {
    const values = parse(await readFile(join(chartDir, 'values.yaml'), 'utf8')) as Record<string, unknown>;
    const schema = JSON.parse(await readFile(join(chartDir, 'values.schema.json'), 'utf8')) as {
      properties: Record<string, unknown>;
    };
    expect(Object.keys(values).sort()).toEqual(Object.keys(schema.properties).sort());
    await expect(template()).resolves.toContain('kind: Deployment');
  });
});
