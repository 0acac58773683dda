// helm lint --strict: the chart's own checks (Chart.yaml, templates, values against values.schema.json)
// with warnings treated as errors, for the default values and for the cluster-wide variant.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { chartDir, repoRoot } from '../tools/paths.ts';
import { helm, valueArgs } from './helm.ts';

describe('helm lint --strict', () => {
  it.each([
    ['default values', {}],
    ['rbac.clusterWide=true', { 'rbac.clusterWide': true }],
    [
      'no leader election, metrics Service',
      { 'leaderElection.enabled': false, 'metrics.service.create': true },
    ],
    [
      'the alerts, PodMonitors and dashboard on',
      {
        'monitoring.prometheusRule.enabled': true,
        'monitoring.podMonitors.enabled': true,
        'monitoring.dashboard.enabled': true,
      },
    ],
  ])('passes with %s', async (_label, values) => {
    const result = await helm(['lint', '--strict', chartDir, ...valueArgs(values)]);
    expect(result.stdout + result.stderr).toContain('1 chart(s) linted, 0 chart(s) failed');
    expect(result.stdout).not.toMatch(/\[(WARNING|ERROR)\]/);
    expect(result.code).toBe(0);
  });

  it('Chart.yaml is apiVersion v2, version 0.1.0, appVersion = package.json version', async () => {
    const chart = parse(await readFile(join(chartDir, 'Chart.yaml'), 'utf8')) as Record<string, unknown>;
    const pkg = JSON.parse(await readFile(join(repoRoot, 'package.json'), 'utf8')) as { version: string };
    expect(chart).toMatchObject({
      apiVersion: 'v2',
      name: 'observatory',
      version: '0.1.0',
      appVersion: pkg.version,
    });
  });
});
