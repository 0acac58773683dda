import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const CONTRACT = join(ROOT, 'server', 'contract');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(path);
    return /\.(ts|mts|js|mjs)$/.test(e.name) ? [path] : [];
  });
}

/** Every module specifier a file names: static imports and re-exports, `import type`, `import()`. */
function specifiers(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const found: string[] = [];
  for (const m of text.matchAll(/(?:^|[\s;])(?:import|export)\s[^'";]*?\bfrom\s*['"]([^'"]+)['"]/g))
    found.push(m[1]!);
  for (const m of text.matchAll(/(?:^|[\s;])import\s*['"]([^'"]+)['"]/g)) found.push(m[1]!);
  for (const m of text.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g)) found.push(m[1]!);
  return found;
}

const inside = (path: string, dir: string) => path === dir || path.startsWith(dir + sep);

/** `file -> specifier` for every relative import of a file in `dir` that resolves into `into` but not `allowed`. */
function crossings(dir: string, into: string, allowed: string): string[] {
  return sourceFiles(dir).flatMap((file) =>
    specifiers(file)
      .filter((s) => s.startsWith('.'))
      .map((s) => ({ s, target: resolve(dirname(file), s) }))
      .filter(({ target }) => inside(target, into) && !inside(target, allowed))
      .map(({ s }) => `${relative(ROOT, file)} -> ${s}`),
  );
}

describe('the contract is the only part of server/ the operator imports', () => {
  it('finds the imports it checks (the operator does import the contract)', () => {
    const toContract = sourceFiles(join(ROOT, 'operator')).flatMap((f) =>
      specifiers(f).filter((s) => s.includes('server/contract/')),
    );
    expect(toContract.length).toBeGreaterThan(0);
  });

  it('operator/ imports nothing from server/ but server/contract/', () => {
    expect(crossings(join(ROOT, 'operator'), join(ROOT, 'server'), CONTRACT)).toEqual([]);
  });
});

describe('server/contract/ imports nothing outside itself', () => {
  it('relative imports stay inside server/contract/', () => {
    expect(crossings(CONTRACT, ROOT, CONTRACT)).toEqual([]);
  });

  it('packages: zod only', () => {
    const packages = sourceFiles(CONTRACT).flatMap((f) =>
      specifiers(f)
        .filter((s) => !s.startsWith('.'))
        .map((s) => `${relative(ROOT, f)} -> ${s}`),
    );
    expect(packages.filter((p) => !p.endsWith('-> zod'))).toEqual([]);
  });
});

describe('configuration is read once, at each process entry', () => {
  // The modules that turn a process's environment into its typed configuration; the kubectl
  // plugin's entry hands its environment to kubeconfig loading, as kubectl does.
  const READERS = ['server/config/processes.ts', 'operator/config.ts', 'operator/kubectl/main.ts'];
  const product = (dir: string) =>
    sourceFiles(join(ROOT, dir)).filter((f) => !relative(ROOT, f).split(sep).includes('dist'));

  it('nothing else in server/ or operator/ reads process.env', () => {
    const readers = [...product('server'), ...product('operator')]
      .filter((f) => /\bprocess\s*(\.\s*env\b|\[\s*['"]env['"]\s*\])/.test(readFileSync(f, 'utf8')))
      .map((f) => relative(ROOT, f).split(sep).join('/'));
    expect(readers.sort()).toEqual([...READERS].sort());
  });
});

/**
 * The layers of a tree, lowest first: a module may import from its own layer and those below, never
 * from one above. Each entry is a folder (or file) directly under the tree's root.
 */
const SERVER_LAYERS: readonly (readonly string[])[] = [
  ['contract'],
  ['errors.ts', 'config'],
  ['datastores', 'coordination', 'migrations', 'blobs', 'llm', 'users', 'job-results'],
  // What version 4's writers and readers of events share: the legacy-to-events mapping, the
  // staging partitions, the propagation record.
  ['events'],
  // The record of deleted traces, which every writer above honours.
  ['tombstones'],
  // The write model: the analytics rows and their merge rules, times, limits, the bodies they
  // apply, and the store adapter with its batching. Every writer stands on it.
  ['write-model'],
  // Building blocks over the stores.
  ['models', 'reads', 'exports', 'projects', 'analytics', 'media', 'comments', 'time'],
  // OTLP decoded and mapped (priced through models).
  ['otel'],
  // The use cases of ingestion (route -> decode -> price -> log -> drain -> store), and the
  // backfill, which waits on the log.
  ['ingestion', 'backfill'],
  // Features built on them.
  [
    'deletion',
    'prompts',
    'scores',
    'producers',
    'datasets',
    'evaluation',
    'preflight',
    'alerts',
    'dashboards',
    'annotation-queues',
    'integrations',
    'masking',
  ],
  // A process's assembly: datastores opened, logger, shutdown, schema at start.
  ['runtime'],
  // A role's work: the worker's jobs, the web, the backup and restore Jobs.
  ['worker', 'web', 'ui', 'backup'],
  ['cli'],
  ['bin'],
];

const OPERATOR_LAYERS: readonly (readonly string[])[] = [
  ['api', 'util', 'config.ts'],
  ['render'],
  ['validation.ts'],
  ['planner'],
  ['index.ts'],
  ['runtime'],
  ['kubectl'],
  ['main.ts'],
];

/** Source files of a product tree (built bundles left out). */
const productFiles = (dir: string) =>
  sourceFiles(dir).filter((f) => !relative(ROOT, f).split(sep).includes('dist'));

/** The folder or file directly under `root` that holds `path`. */
const unitOf = (root: string, path: string) => relative(root, path).split(sep)[0]!;

/** Relative imports resolved to files (`.ts` named, as the codebase writes them). */
const importsOf = (file: string) =>
  specifiers(file)
    .filter((s) => s.startsWith('.'))
    .map((s) => ({ s, target: resolve(dirname(file), s) }));

function upwardImports(root: string, layers: readonly (readonly string[])[]): string[] {
  const rank = new Map(layers.flatMap((units, i) => units.map((u) => [u, i] as const)));
  return productFiles(root).flatMap((file) => {
    const from = rank.get(unitOf(root, file))!;
    return importsOf(file)
      .filter(({ target }) => inside(target, root))
      .filter(({ target }) => (rank.get(unitOf(root, target)) ?? Number.POSITIVE_INFINITY) > from)
      .map(({ s }) => `${relative(ROOT, file)} -> ${s}`);
  });
}

describe.each([
  ['server', SERVER_LAYERS],
  ['operator', OPERATOR_LAYERS],
] as const)('%s/ imports run downward only', (tree, layers) => {
  const root = join(ROOT, tree);

  it('every folder and file at its top has a layer', () => {
    const units = new Set(productFiles(root).map((f) => unitOf(root, f)));
    const placed = new Set(layers.flat());
    expect([...units].filter((u) => !placed.has(u))).toEqual([]);
    expect([...placed].filter((u) => !units.has(u))).toEqual([]);
  });

  it('no module imports from a layer above its own', () => {
    expect(upwardImports(root, layers)).toEqual([]);
  });
});

describe('no import cycle in server/ or operator/', () => {
  it('finds none among the modules (type-only imports included)', () => {
    const files = [...productFiles(join(ROOT, 'server')), ...productFiles(join(ROOT, 'operator'))];
    const known = new Set(files);
    const deps = new Map(
      files.map((f) => [
        f,
        importsOf(f)
          .map((i) => i.target)
          .filter((t) => known.has(t)),
      ]),
    );
    const state = new Map<string, 'open' | 'done'>();
    const cycles: string[] = [];
    const visit = (file: string, path: string[]) => {
      state.set(file, 'open');
      for (const next of deps.get(file)!) {
        if (state.get(next) === 'open') {
          const loop = [...path.slice(path.indexOf(next)), next];
          cycles.push(loop.map((f) => relative(ROOT, f)).join(' -> '));
        } else if (!state.has(next)) visit(next, [...path, next]);
      }
      state.set(file, 'done');
    };
    for (const f of files) if (!state.has(f)) visit(f, [f]);
    expect(cycles).toEqual([]);
  });
});
