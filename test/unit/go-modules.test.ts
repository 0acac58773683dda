/**
 * The Kubernetes binaries this project builds (the local cluster's control plane and node
 * components, and kind's multi-call node binary) come from three Go modules with one dependency
 * graph: every module two of them require is at the same version, with the same replaces. Then a
 * package compiled for one build (same flags: -trimpath, CGO_ENABLED=0) is reused from Go's build
 * cache by the others instead of compiling again.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { clusterSource } from '../../cluster/paths.ts';

const MODULES = ['controlplane', 'nodecomponents', 'kindnode'];

/** `path -> version` of a go.mod's require lines and, separately, of its replace lines. */
function parse(text: string): { requires: Map<string, string>; replaces: Map<string, string> } {
  const requires = new Map<string, string>();
  const replaces = new Map<string, string>();
  let block = '';
  for (const raw of text.split('\n')) {
    const line = raw.replace(/\/\/.*$/, '').trim();
    if (!line) continue;
    if (line === ')') {
      block = '';
      continue;
    }
    const opened = /^(require|replace) \($/.exec(line);
    if (opened) {
      block = opened[1]!;
      continue;
    }
    const single = /^(require|replace) (.*)$/.exec(line);
    const [kind, body] = single ? [single[1]!, single[2]!] : [block, line];
    if (kind === 'require') {
      const [path, version] = body.split(/\s+/);
      requires.set(path!, version!);
    } else if (kind === 'replace') {
      const [from, to] = body.split(/\s*=>\s*/);
      replaces.set(from!, to!);
    }
  }
  return { requires, replaces };
}

const parsed = MODULES.map((name) => ({
  name,
  ...parse(readFileSync(join(clusterSource, name, 'go.mod'), 'utf8')),
}));

describe('the Kubernetes Go modules share one dependency graph', () => {
  it('reads every go.mod', () => {
    for (const m of parsed) expect(m.requires.size, m.name).toBeGreaterThan(100);
  });

  it('requires every shared module at one version', () => {
    const versions = new Map<string, Set<string>>();
    for (const m of parsed)
      for (const [path, version] of m.requires)
        versions.set(path, (versions.get(path) ?? new Set()).add(`${version} (${m.name})`));
    const split = [...versions].filter(([, v]) => new Set([...v].map((x) => x.split(' ')[0])).size > 1);
    expect(split.map(([path, v]) => `${path}: ${[...v].join(', ')}`)).toEqual([]);
  });

  it('replaces the same modules the same way', () => {
    const [first, ...rest] = parsed;
    for (const m of rest)
      expect(Object.fromEntries(m.replaces), m.name).toEqual(Object.fromEntries(first!.replaces));
  });
});
