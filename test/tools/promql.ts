// Prometheus's own PromQL parser (promql/parser) and rule-file validation (model/rulefmt, what
// `promtool check rules` runs), from github.com/prometheus/prometheus built once from the Go module
// proxy (test/tools/promql: go.mod pins the version) and cached by the hash of that module, for the
// tests of the chart's alerting rules and dashboard queries.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { ensureBuilt } from '../../cluster/cached-build.ts';
import { type GoBuild, goBuild, goInputs } from '../../cluster/go-build.ts';
import { stepReporter } from '../../cluster/steps.ts';

const build: GoBuild = {
  moduleDir: join(import.meta.dirname, 'promql'),
  packages: ['.'],
  ldflags: [],
};

/** One expression's verdict: the metric names its selectors name, or the parser's error. */
export interface PromqlVerdict {
  metrics?: string[];
  error?: string;
}

/** The directory holding the `promql` binary; builds it on the first call on this machine. */
export function ensurePromqlParser(
  log: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
): Promise<string> {
  return ensureBuilt(
    {
      name: 'promql-parser',
      label: 'PromQL parser and rule checker (github.com/prometheus/prometheus v0.316.0)',
      inputs: () => goInputs(build),
      async build(out) {
        await goBuild(build, out);
        return {};
      },
    },
    stepReporter(log),
  );
}

let built: Promise<string> | undefined;
/** Built (or found in the cache) once per process. */
const binaryDir = () => {
  built ??= ensurePromqlParser();
  return built;
};

async function runPromql<T>(mode: 'exprs' | 'rules', input: string): Promise<T> {
  const binary = join(await binaryDir(), 'promql');
  return new Promise((resolve, reject) => {
    const child = execFile(binary, [mode], { timeout: 30_000 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${binary} ${mode} failed: ${stderr || error.message}`));
      else resolve(JSON.parse(stdout) as T);
    });
    child.stdin!.end(input);
  });
}

/** Parses every expression with Prometheus's parser, in one run of the binary. */
export function parsePromql(expressions: string[]): Promise<PromqlVerdict[]> {
  return runPromql('exprs', JSON.stringify(expressions));
}

/**
 * Validates a Prometheus rule file (`{groups: [...]}`, the spec of a PrometheusRule) with
 * Prometheus's rulefmt, as `promtool check rules` does; resolves to its errors (none: valid).
 */
export async function checkRules(groups: unknown): Promise<string[]> {
  return (await runPromql<{ errors: string[] }>('rules', JSON.stringify(groups))).errors;
}
