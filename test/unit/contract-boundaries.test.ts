import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const CONTRACT = join(ROOT, 'server', 'contract');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(path);
    return /\.(ts|tsx|mts|js|mjs)$/.test(e.name) ? [path] : [];
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
  const READERS = ['server/kernel/config/processes.ts', 'operator/config.ts', 'operator/kubectl/main.ts'];
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
 * from one above. Each entry is a folder (or file) directly under the tree's root, or one level down
 * in a folder that groups layers (server/kernel, platform, features, app: docs/architecture.md).
 */
const SERVER_LAYERS: readonly (readonly string[])[] = [
  // What the operator shares: write modes, env names, ports, the worker's API. Imports nothing.
  ['contract'],
  // Pure building blocks: errors, configuration parsing, timers, the accepted date-times, roles,
  // comparisons, PATCH merging.
  [
    'kernel/errors.ts',
    'kernel/config',
    'kernel/passes.ts',
    'kernel/iso-datetime.ts',
    'kernel/roles.ts',
    'kernel/comparisons.ts',
    'kernel/patches.ts',
  ],
  // Adapters: the datastores, coordination, schema migrations, blob storage, the embedded
  // analytics engine's HTTP server, and what every feature's routes share (route specs, gates,
  // answers, the base of the route contexts).
  [
    'platform/datastores',
    'platform/coordination',
    'platform/migrations',
    'platform/blobs',
    'platform/analytics-server',
    'platform/http',
  ],
  // Features, lowest first; each holds its routes (features/<f>/routes). Users, job results and
  // the audit log stand on the adapters alone.
  ['features/users', 'features/job-results', 'features/audit'],
  // What version 4's writers and readers of events share: the legacy-to-events mapping, the
  // staging partitions, the propagation record.
  ['features/events'],
  // The record of deleted traces, which every writer above honours.
  ['features/tombstones'],
  // The write model: the analytics rows and their merge rules, times, limits, the bodies they
  // apply, and the store adapter with its batching. Every writer stands on it.
  ['features/write-model'],
  // Building blocks over the stores.
  [
    'features/models',
    'features/reads',
    'features/exports',
    'features/projects',
    'features/media',
    'features/comments',
  ],
  // OTLP decoded and mapped (priced through models).
  ['features/otel'],
  // The use cases of ingestion (route -> decode -> price -> log -> drain -> store); its routes'
  // context is the one of every route that accepts writes (the scores' too).
  ['features/ingestion'],
  // Features built on them; the backfill waits on the log, and its page shows the producers;
  // deleting an LLM connection pauses the evaluation rules that use it.
  [
    'features/llm-connections',
    'features/backfill',
    'features/deletion',
    'features/prompts',
    'features/scores',
    'features/producers',
    'features/datasets',
    'features/evaluation',
    'features/preflight',
    'features/alerts',
    'features/dashboards',
    'features/annotation-queues',
    'features/integrations',
    'features/masking',
    'features/backup',
  ],
  // A process's assembly: datastores opened, logger, shutdown, the encryption key checked.
  ['app/runtime'],
  // The processes' work: the worker's jobs, the web's composition of the features' routes, the UI.
  ['app/worker', 'app/web', 'app/ui'],
  // The composition root that starts every role, and the executables.
  ['cli'],
  ['bin'],
];

/** The server's top level, lowest layer first: the folders that name its architecture. */
const SERVER_TOP = ['contract', 'kernel', 'platform', 'features', 'app', 'cli', 'bin'];

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

/** Folders whose children are the layers' units (`features/otel`), per tree. */
const groupsOf = (layers: readonly (readonly string[])[]) =>
  new Set(layers.flat().flatMap((u) => (u.includes('/') ? [u.split('/')[0]!] : [])));

/** The unit of `layers` that holds `path`: the folder or file under `root`, or under a group folder. */
function unitOf(root: string, path: string, groups: ReadonlySet<string>): string {
  const parts = relative(root, path).split(sep);
  return groups.has(parts[0]!) ? parts.slice(0, 2).join('/') : parts[0]!;
}

/** Relative imports resolved to files (`.ts` named, as the codebase writes them). */
const importsOf = (file: string) =>
  specifiers(file)
    .filter((s) => s.startsWith('.'))
    .map((s) => ({ s, target: resolve(dirname(file), s) }));

function upwardImports(root: string, layers: readonly (readonly string[])[]): string[] {
  const rank = new Map(layers.flatMap((units, i) => units.map((u) => [u, i] as const)));
  const groups = groupsOf(layers);
  return productFiles(root).flatMap((file) => {
    const from = rank.get(unitOf(root, file, groups))!;
    return importsOf(file)
      .filter(({ target }) => inside(target, root))
      .filter(({ target }) => (rank.get(unitOf(root, target, groups)) ?? Number.POSITIVE_INFINITY) > from)
      .map(({ s }) => `${relative(ROOT, file)} -> ${s}`);
  });
}

describe.each([
  ['server', SERVER_LAYERS],
  ['operator', OPERATOR_LAYERS],
] as const)('%s/ imports run downward only', (tree, layers) => {
  const root = join(ROOT, tree);

  it('every folder and file at its top (and in a group folder) has a layer', () => {
    const groups = groupsOf(layers);
    const units = new Set(productFiles(root).map((f) => unitOf(root, f, groups)));
    const placed = new Set(layers.flat());
    expect([...units].filter((u) => !placed.has(u))).toEqual([]);
    expect([...placed].filter((u) => !units.has(u))).toEqual([]);
  });

  it('no module imports from a layer above its own', () => {
    expect(upwardImports(root, layers)).toEqual([]);
  });
});

describe("server/'s top level names its layers", () => {
  it('holds only the layer folders', () => {
    const top = new Set(
      productFiles(join(ROOT, 'server')).map((f) => relative(join(ROOT, 'server'), f).split(sep)[0]!),
    );
    expect([...top].sort()).toEqual([...SERVER_TOP].sort());
  });

  it('ranks each top-level folder as one contiguous run of layers, in order', () => {
    const runs = SERVER_LAYERS.flatMap((units) => {
      const tops = [...new Set(units.map((u) => u.split('/')[0]!))];
      expect(tops).toHaveLength(1);
      return tops;
    }).filter((top, i, all) => top !== all[i - 1]);
    expect(runs).toEqual(SERVER_TOP);
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
