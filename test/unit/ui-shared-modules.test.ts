/** The server modules the web UI bundles: the ones build-ui.ts hashes and the image's build stage copies. */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SHARED_MODULES, UI_ROOT } from '../../scripts/build-ui.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const sources = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : /\.tsx?$/.test(e.name) ? [join(dir, e.name)] : [],
  );
const valueImports = (text: string) =>
  [...text.matchAll(/^import\s+(?!type\s)[^'"]*?from\s+'([^']+)'/gm)].map((m) => m[1]!);

describe('server modules in the UI bundle', () => {
  it('are exactly the shared modules, import nothing, and are copied into the build stage', () => {
    const outside = new Set<string>();
    for (const file of sources(join(UI_ROOT, 'src'))) {
      for (const spec of valueImports(readFileSync(file, 'utf8'))) {
        if (!spec.startsWith('.')) continue;
        const path = relative(ROOT, resolve(dirname(file), spec));
        if (!path.startsWith('server/app/ui/')) outside.add(path);
      }
    }
    expect([...outside].sort()).toEqual([...SHARED_MODULES].sort());
    const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
    for (const module of SHARED_MODULES) {
      expect(valueImports(readFileSync(join(ROOT, module), 'utf8')), module).toEqual([]);
      expect(dockerfile, module).toContain(`COPY ${module} ./${dirname(module)}/`);
    }
  });
});
