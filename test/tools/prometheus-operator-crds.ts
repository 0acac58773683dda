// The Prometheus Operator's own CustomResourceDefinitions of the kinds the chart renders
// (PrometheusRule, PodMonitor), taken from its Go module (github.com/prometheus-operator/
// prometheus-operator, example/prometheus-operator-crd/, as its releases publish them) through the
// Go module proxy, and cached under .cache/. The tests validate the chart's objects against them
// with kubeconform and with a real API server that has them installed.
import { execFile } from 'node:child_process';
import { copyFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ensureBuilt } from '../../cluster/cached-build.ts';
import { goBinary } from '../../cluster/paths.ts';
import { stepReporter } from '../../cluster/steps.ts';

const run = promisify(execFile);
const MODULE = 'github.com/prometheus-operator/prometheus-operator';
export const PROMETHEUS_OPERATOR_VERSION = 'v0.85.0';
const CRD_FILES = ['monitoring.coreos.com_prometheusrules.yaml', 'monitoring.coreos.com_podmonitors.yaml'];

/** A directory holding the CRD files (and nothing else but build.json). */
export function ensurePrometheusOperatorCrds(
  log: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
): Promise<string> {
  return ensureBuilt(
    {
      name: `prometheus-operator-crds-${PROMETHEUS_OPERATOR_VERSION}`,
      label: `Prometheus Operator CRDs (${MODULE}@${PROMETHEUS_OPERATOR_VERSION})`,
      inputs: async () => [MODULE, PROMETHEUS_OPERATOR_VERSION, ...CRD_FILES],
      async build(out) {
        const { stdout } = await run(
          goBinary(),
          ['mod', 'download', '-json', `${MODULE}@${PROMETHEUS_OPERATOR_VERSION}`],
          { maxBuffer: 1024 * 1024 },
        );
        const { Dir, Sum } = JSON.parse(stdout) as { Dir: string; Sum: string };
        for (const file of CRD_FILES)
          await copyFile(join(Dir, 'example', 'prometheus-operator-crd', file), join(out, file));
        return { module: MODULE, version: PROMETHEUS_OPERATOR_VERSION, sum: Sum, files: CRD_FILES };
      },
    },
    stepReporter(log),
  );
}
