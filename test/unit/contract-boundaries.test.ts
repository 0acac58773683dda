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
  const READERS = ['server/config/env.ts', 'operator/config.ts', 'operator/kubectl/main.ts'];
  const product = (dir: string) =>
    sourceFiles(join(ROOT, dir)).filter((f) => !relative(ROOT, f).split(sep).includes('dist'));

  it('nothing else in server/ or operator/ reads process.env', () => {
    const readers = [...product('server'), ...product('operator')]
      .filter((f) => /\bprocess\s*(\.\s*env\b|\[\s*['"]env['"]\s*\])/.test(readFileSync(f, 'utf8')))
      .map((f) => relative(ROOT, f).split(sep).join('/'));
    expect(readers.sort()).toEqual([...READERS].sort());
  });
});
