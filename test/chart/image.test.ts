// What can be checked of the container image without a Docker engine: the Dockerfile's stages,
// base image, user and entrypoint; that the build context (.dockerignore) holds only what runs;
// that every role the operator and the chart use resolves in the CLI; that the runtime code needs
// no dev dependency (the final stage has production node_modules only).
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { copyFile, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { contextFiles } from '../../cluster/images/app-image.ts';
import { repoRoot } from '../tools/paths.ts';

const exec = promisify(execFile);

interface Instruction {
  op: string;
  args: string;
}
interface Stage {
  from: string;
  name?: string;
  instructions: Instruction[];
}

/** The Dockerfile's stages (line continuations joined, comments dropped, global ARG defaults substituted). */
function parseDockerfile(text: string): Stage[] {
  const lines = text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#'));
  const globals: Record<string, string> = {};
  const stages: Stage[] = [];
  for (const line of lines) {
    const [, op, args = ''] = /^(\S+)\s*(.*)$/.exec(line)!;
    const upper = op!.toUpperCase();
    if (upper === 'FROM') {
      const [image, as, name] = args
        .replace(/\$\{(\w+)\}/g, (_m, v: string) => globals[v] ?? '')
        .split(/\s+/);
      stages.push({ from: image!, ...(as?.toUpperCase() === 'AS' ? { name: name! } : {}), instructions: [] });
    } else if (stages.length === 0) {
      if (upper === 'ARG') {
        const [name, value = ''] = args.split('=');
        globals[name!] = value;
      }
    } else {
      stages.at(-1)!.instructions.push({ op: upper, args });
    }
  }
  return stages;
}

/** Docker's .dockerignore semantics: a path is excluded when the last pattern matching it (or a parent) is not negated. */
function dockerIgnore(patterns: string[]) {
  const rules = patterns
    .map((p) => p.trim())
    .filter((p) => p && !p.startsWith('#'))
    .map((p) => {
      const negate = p.startsWith('!');
      const glob = (negate ? p.slice(1) : p).replace(/^\/+|\/+$/g, '');
      const source = glob
        .split('/')
        .map((part) =>
          part === '**'
            ? '.*'
            : part
                .replace(/[.+^${}()|[\]\\]/g, '\\$&')
                .replace(/\*/g, '[^/]*')
                .replace(/\?/g, '[^/]'),
        )
        .join('/')
        .replace(/\.\*\//g, '(?:.*/)?');
      return { negate, regex: new RegExp(`^${source}$`) };
    });
  return (path: string) => {
    const parts = path.split('/');
    const prefixes = parts.map((_p, i) => parts.slice(0, i + 1).join('/'));
    let excluded = false;
    for (const rule of rules) {
      if (prefixes.some((prefix) => rule.regex.test(prefix))) excluded = !rule.negate;
    }
    return !excluded;
  };
}

async function listFiles(dir: string, skip: Set<string>): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (skip.has(relative(repoRoot, path))) continue;
    if (entry.isDirectory()) out.push(...(await listFiles(path, skip)));
    else out.push(relative(repoRoot, path));
  }
  return out;
}

const dockerfile = async () => parseDockerfile(await readFile(join(repoRoot, 'Dockerfile'), 'utf8'));
const finalStage = async () => (await dockerfile()).at(-1)!;

/** Roles the chart (operator) and the operator's children (web, worker, Jobs) run. */
const roles = ['web', 'worker', 'migrate', 'backfill', 'preflight', 'producers', 'cleanup', 'create-project'];
/** Being written; checked once the CLI lists it. */
const pendingRoles = ['operator'];

async function cli(args: string[]) {
  // No datastore or cluster settings: a role that loads must stop at its configuration or usage check.
  const env: NodeJS.ProcessEnv = { PATH: process.env['PATH'], HOME: process.env['HOME'] };
  return exec(process.execPath, [join(repoRoot, 'server/bin/observatory.ts'), ...args], {
    cwd: repoRoot,
    env,
    timeout: 30_000,
  }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code?: number; stdout: string; stderr: string; killed?: boolean }) => {
      if (error.killed) throw new Error(`observatory ${args.join(' ')} did not stop within 30s`);
      return { code: error.code ?? 1, stdout: error.stdout, stderr: error.stderr };
    },
  );
}

describe('container image build files', () => {
  it('three stages on a Node 24 slim base pinned by tag: production dependencies with npm install --omit=dev, the UI and operator bundles, what runs', async () => {
    const stages = await dockerfile();
    expect(stages.map((s) => s.name ?? '(final)')).toEqual(['deps', 'build', '(final)']);
    for (const stage of stages) expect(stage.from).toMatch(/^node:24\.\d+\.\d+-(bookworm-)?slim$/);
    const [deps, build, final] = stages as [Stage, Stage, Stage];
    const runs = (stage: Stage) => stage.instructions.filter((i) => i.op === 'RUN').map((i) => i.args);
    expect(runs(deps)).toHaveLength(1);
    expect(runs(deps)[0]).toMatch(/^npm install --omit=dev\b/);
    // The build stage bundles the browser code and the operator; only their outputs reach the final stage.
    expect(runs(build).slice(-2)).toEqual(['node scripts/build-ui.ts', 'node scripts/build-operator.ts']);
    // The final stage installs only the PostgreSQL client the backup and restore Jobs run.
    expect(runs(final)).toHaveLength(1);
    expect(runs(final)[0]).toMatch(/apt-get install -y --no-install-recommends postgresql-client-15 /);
  });

  it('the final stage copies only what runs, runs as a non-root user, and enters through the CLI', async () => {
    const final = await finalStage();
    const copies = final.instructions.filter((i) => i.op === 'COPY').map((i) => i.args);
    expect(copies).toEqual([
      '--from=deps /app/node_modules ./node_modules',
      'package.json package-lock.json ./',
      'server ./server',
      'operator ./operator',
      '--from=build /app/server/app/ui/dist ./server/app/ui/dist',
      '--from=build /app/operator/dist/operator.mjs ./operator/dist/operator.mjs',
    ]);
    const users = final.instructions.filter((i) => i.op === 'USER').map((i) => i.args);
    expect(users).toEqual(['10001:10001']);
    const [uid, gid] = users[0]!.split(':').map(Number);
    expect(uid).toBeGreaterThan(0);
    expect(gid).toBeGreaterThan(0);
    // USER comes after every COPY/RUN, so nothing later runs as root.
    expect(final.instructions.findLastIndex((i) => i.op === 'COPY')).toBeLessThan(
      final.instructions.findIndex((i) => i.op === 'USER'),
    );
    const entrypoint = final.instructions.filter((i) => i.op === 'ENTRYPOINT').map((i) => JSON.parse(i.args));
    expect(entrypoint).toEqual([['node', 'server/bin/observatory.ts']]);
    expect(existsSync(join(repoRoot, 'server/bin/observatory.ts'))).toBe(true);
    expect(final.instructions.some((i) => i.op === 'CMD')).toBe(false); // the role is the container's args
  });

  it("the build context (.dockerignore) holds the manifest, lockfile, sources and the bundles' build scripts, nothing else", async () => {
    const included = dockerIgnore((await readFile(join(repoRoot, '.dockerignore'), 'utf8')).split('\n'));
    const files = await listFiles(repoRoot, new Set(['node_modules', '.git', '.cache', '.data']));
    const sent = files.filter(included);
    expect([...new Set(sent.map((f) => f.split('/')[0]))].sort()).toEqual([
      'operator',
      'package-lock.json',
      'package.json',
      'scripts',
      'server',
      'tsconfig.json',
    ]);
    expect(sent.filter((f) => f.startsWith('scripts/'))).toEqual([
      'scripts/build-operator.ts',
      'scripts/build-ui.ts',
    ]);
    for (const built of ['server/app/ui/dist/', 'operator/dist/']) {
      expect(sent.filter((f) => f.startsWith(built))).toEqual([]);
      expect(included(`${built}x.js`), built).toBe(false);
    }
    expect(sent).toContain('server/bin/observatory.ts');
    expect(sent.filter((f) => f.endsWith('.test.ts'))).toEqual([]);
    for (const path of [
      'node_modules/yaml/package.json',
      '.git/HEAD',
      '.cache/tools/helm',
      'test/chart/helm.ts',
    ]) {
      expect(included(path), path).toBe(false);
    }
    // The image's cache key (cluster/images/app-image.ts) covers exactly what is sent, and the build files.
    expect(await contextFiles()).toEqual(['.dockerignore', 'Dockerfile', ...sent].sort());
  });

  it('every role the chart and the operator use resolves in the CLI', async () => {
    const help = await cli(['--help']);
    expect(help.code).toBe(0);
    const listed = new Set([...help.stdout.matchAll(/^ {2}([a-z-]+)\s/gm)].map((m) => m[1]));
    const present = [...roles, ...pendingRoles.filter((role) => listed.has(role))];
    for (const role of present) expect(listed, `observatory --help lists ${role}`).toContain(role);
    // Loading each one-shot or server role's module: it answers with its own usage or configuration
    // error, never "unknown command". (`operator` is only looked up in --help: it has no --help of
    // its own and would start reconciling.)
    const results = await Promise.all(
      roles.map(async (role) => ({ role, ...(await cli([role, '--help'])) })),
    );
    for (const { role, stdout, stderr } of results) {
      expect(stderr, role).not.toMatch(/unknown command/);
      expect(stderr + stdout, role).toContain(role);
    }
  });

  it("the deps stage's npm install accepts package.json with package-lock.json (dry run on a copy of the build context)", async () => {
    // What `COPY package.json package-lock.json ./` + `RUN npm install --omit=dev` sees; --dry-run installs nothing.
    const context = await mkdtemp(join(tmpdir(), 'observatory-image-deps-'));
    try {
      for (const file of ['package.json', 'package-lock.json'])
        await copyFile(join(repoRoot, file), join(context, file));
      const result = await exec('npm', ['install', '--omit=dev', '--dry-run', '--no-audit', '--no-fund'], {
        cwd: context,
        timeout: 120_000,
        maxBuffer: 16 * 1024 * 1024,
      }).then(
        () => '',
        (error: { stderr?: string; message: string }) => error.stderr || error.message,
      );
      expect(
        result
          .split('\n')
          .filter((line) => /npm error/.test(line))
          .slice(0, 8)
          .join('\n'),
      ).toBe('');
    } finally {
      await rm(context, { recursive: true, force: true });
    }
  });

  it('the runtime code imports only production dependencies (the image has no dev dependencies)', async () => {
    const pkg = JSON.parse(await readFile(join(repoRoot, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
      devDependencies: Record<string, string>;
    };
    const lock = JSON.parse(await readFile(join(repoRoot, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { dev?: boolean }>;
    };
    // What `npm install --omit=dev` installs: the lockfile's entries not marked dev.
    const production = new Set(
      Object.entries(lock.packages)
        .filter(([path, entry]) => path.startsWith('node_modules/') && !entry.dev)
        .map(([path]) => path.slice('node_modules/'.length)),
    );
    // Dev tools are left out (a dev dependency that a production package also needs, such as
    // @opentelemetry/api, is installed as that package's dependency, as in any npm install --omit=dev).
    for (const tool of ['vitest', 'typescript', '@biomejs/biome', 'fast-check', 'langfuse']) {
      expect(Object.keys(pkg.devDependencies)).toContain(tool);
      expect(production.has(tool), tool).toBe(false);
    }
    for (const dep of Object.keys(pkg.dependencies)) expect(production.has(dep), dep).toBe(true);

    const sources = (await listFiles(join(repoRoot, 'server'), new Set()))
      .concat(await listFiles(join(repoRoot, 'operator'), new Set()))
      // server/app/ui/ is browser code, bundled by the image's ui stage: the bundle is what the web serves.
      .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts') && !f.startsWith('server/app/ui/'));
    const missing: string[] = [];
    for (const file of sources) {
      const text = await readFile(join(repoRoot, file), 'utf8');
      const specifiers = [
        ...text.matchAll(/^\s*import\s+(?!type\s)(?:[^'"]*?\sfrom\s+)?['"]([^'"]+)['"]/gm),
        ...text.matchAll(/^\s*export\s+(?!type\s)[^'"]*?\sfrom\s+['"]([^'"]+)['"]/gm),
        ...text.matchAll(/\b(?:import|require)\(\s*['"]([^'"]+)['"]\s*\)/g),
      ].map((m) => m[1]!);
      for (const specifier of specifiers) {
        if (specifier.startsWith('.') || specifier.startsWith('node:') || specifier.startsWith('/')) continue;
        const name = specifier.startsWith('@')
          ? specifier.split('/').slice(0, 2).join('/')
          : specifier.split('/')[0]!;
        if (!production.has(name)) missing.push(`${file}: ${specifier}`);
      }
    }
    expect(missing).toEqual([]);
  });
});
