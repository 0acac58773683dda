/**
 * Bundles the operator's process (server/bin/operator.ts, `observatory operator` without the other
 * roles) into one ES module, operator/dist/operator.mjs, the file the chart's operator container
 * runs. Why: run from the sources, the process loads every module of @kubernetes/client-node (about
 * 2,700 files of API models) and keeps their source and compiled code resident; the tree-shaken
 * bundle holds what the operator calls, about 40% less resident memory at rest (`npm run bench`).
 *
 * Rebuilt only when an input changed: next to the output (operator/dist/.build-hash) the last build
 * keeps the list of repository files it read and a hash of them, this script and package-lock.json
 * (which pins every bundled package), so an unchanged tree costs one hash and no build. Run by
 * scripts/run (every npm script), by the image's build stage, and as `npm run build:operator`.
 * `--force` builds even when the hash matches.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { isAbsolute, join, relative, resolve } from 'node:path';
import type { MinifyOptions } from 'rolldown';

const ROOT = resolve(import.meta.dirname, '..');
export const OPERATOR_ENTRY = join(ROOT, 'server/bin/operator.ts');
export const OPERATOR_DIST = join(ROOT, 'operator/dist');
export const OPERATOR_BUNDLE = join(OPERATOR_DIST, 'operator.mjs');
const STAMP = join(OPERATOR_DIST, '.build-hash');
/** Read by every build besides the modules it bundles. */
const ALWAYS = ['scripts/build-operator.ts', 'package-lock.json'];

/**
 * Compressed and without whitespace, but not mangled: names stay as written, so a stack trace names
 * the operator's and client-node's functions and classes (and `err.name`, `constructor.name` read
 * the same as from the sources). Measured after loading, with the chart's NODE_OPTIONS: readable
 * (no minification) 8.6 MB and 103 MB RSS, this 3.9 MB and 97 MB, fully mangled 2.7 MB and 95 MB.
 */
const MINIFY: MinifyOptions = { compress: true, mangle: false, codegen: { removeWhitespace: true } };

interface Stamp {
  hash: string;
  inputs: string[];
}

function hashOf(inputs: string[]): string {
  const h = createHash('sha256');
  for (const f of [...new Set([...ALWAYS, ...inputs])].sort()) {
    h.update(f)
      .update('\0')
      .update(readFileSync(join(ROOT, f)))
      .update('\0');
  }
  return h.digest('hex');
}

function readStamp(): Stamp | undefined {
  try {
    return JSON.parse(readFileSync(STAMP, 'utf8')) as Stamp;
  } catch {
    return undefined;
  }
}

/** True when the bundle exists and none of the files its last build read has changed since. */
export function isUpToDate(): boolean {
  const stamp = readStamp();
  if (!stamp || !existsSync(OPERATOR_BUNDLE)) return false;
  if (!stamp.inputs.every((f) => existsSync(join(ROOT, f)))) return false;
  return hashOf(stamp.inputs) === stamp.hash;
}

/** Builds when an input changed (or `force`); prints what it does. */
export async function ensureOperatorBuilt(opts: { force?: boolean; log?: (line: string) => void } = {}) {
  const log = opts.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const started = performance.now();
  if (!opts.force && isUpToDate()) return { built: false, ms: performance.now() - started };
  log('bundling the operator (server/bin/operator.ts -> operator/dist/operator.mjs, rolldown)…');
  const { build } = await import('rolldown');
  mkdirSync(OPERATOR_DIST, { recursive: true });
  const { output } = await build({
    input: OPERATOR_ENTRY,
    platform: 'node',
    logLevel: 'warn',
    output: { file: OPERATOR_BUNDLE, format: 'esm', minify: MINIFY },
  });
  // The repository's own modules the bundle holds; node_modules is covered by package-lock.json.
  const inputs = output
    .flatMap((o) => (o.type === 'chunk' ? o.moduleIds : []))
    .filter((id) => isAbsolute(id))
    .map((id) => relative(ROOT, id))
    .filter((f) => !f.startsWith('..') && !f.split('/').includes('node_modules'));
  writeFileSync(
    STAMP,
    `${JSON.stringify({ hash: hashOf(inputs), inputs: inputs.sort() } satisfies Stamp)}\n`,
  );
  const ms = performance.now() - started;
  log(
    `operator bundled in ${(ms / 1000).toFixed(1)}s: operator.mjs ${(statSync(OPERATOR_BUNDLE).size / 1024 / 1024).toFixed(1)} MB from ${inputs.length} repository modules`,
  );
  return { built: true, ms };
}

if (import.meta.main) {
  const r = await ensureOperatorBuilt({ force: process.argv.includes('--force') });
  if (!r.built && process.argv.includes('--verbose')) process.stderr.write('operator bundle up to date\n');
}
