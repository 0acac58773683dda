/**
 * Builds the web UI (server/app/ui) with Vite when its sources changed since the last build: a hash of
 * the sources, the Vite config and package-lock.json is kept next to the output
 * (server/app/ui/dist/.build-hash), so an unchanged tree costs one hash and no build. Run by
 * scripts/run (every npm script), by the image's build stage, and as `npm run build:ui`.
 * `--force` builds even when the hash matches.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '..');
export const UI_ROOT = join(ROOT, 'server/app/ui');
export const UI_DIST = join(UI_ROOT, 'dist');
const STAMP = join(UI_DIST, '.build-hash');
/**
 * The server modules the UI bundles besides its own tree, stated once for the API and the UI: pure
 * and with no imports of their own. The image's build stage copies them beside server/app/ui.
 */
export const SHARED_MODULES = [
  'server/contract/duration.ts',
  'server/features/dashboards/catalog.ts',
  'server/features/reads/aggregations.ts',
];

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return path === UI_DIST ? [] : files(path);
    return [path];
  });
}

/** Hash of everything the build reads: the UI's sources and config, the shared modules, and the locked dependencies. */
export function sourceHash(): string {
  const h = createHash('sha256');
  for (const f of [
    ...files(UI_ROOT),
    ...SHARED_MODULES.map((m) => join(ROOT, m)),
    join(ROOT, 'package-lock.json'),
  ].sort()) {
    h.update(relative(ROOT, f)).update('\0').update(readFileSync(f)).update('\0');
  }
  return h.digest('hex');
}

export function isUpToDate(hash = sourceHash()): boolean {
  return existsSync(STAMP) && readFileSync(STAMP, 'utf8').trim() === hash;
}

export interface BuildReport {
  built: boolean;
  ms: number;
  files: { name: string; bytes: number }[];
}

/** Builds when the sources changed (or `force`); prints what it does. */
export async function ensureUiBuilt(opts: { force?: boolean; log?: (line: string) => void } = {}) {
  const log = opts.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const started = performance.now();
  const hash = sourceHash();
  if (!opts.force && isUpToDate(hash)) {
    return { built: false, ms: performance.now() - started, files: [] } satisfies BuildReport;
  }
  log('building the web UI (server/app/ui, vite)…');
  const { build } = await import('vite');
  await build({ configFile: join(UI_ROOT, 'vite.config.ts'), logLevel: 'info' });
  writeFileSync(STAMP, `${hash}\n`);
  const assets = join(UI_DIST, 'assets');
  const out = readdirSync(assets).map((name) => ({ name, bytes: statSync(join(assets, name)).size }));
  const ms = performance.now() - started;
  log(
    `web UI built in ${(ms / 1000).toFixed(1)}s: ${out.map((f) => `${f.name} ${(f.bytes / 1024).toFixed(1)} kB`).join(', ')}`,
  );
  return { built: true, ms, files: out } satisfies BuildReport;
}

if (import.meta.main) {
  const r = await ensureUiBuilt({ force: process.argv.includes('--force') });
  if (!r.built && process.argv.includes('--verbose')) process.stderr.write('web UI up to date\n');
}
