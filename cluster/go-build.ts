// Builds Go programs of a module under cluster/ (its go.mod pins every dependency; the Go module
// proxy serves them) as static binaries, niced: a cold build takes minutes of CPU on a machine
// others share.
import { execFile } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { goBinary } from './paths.ts';

const run = promisify(execFile);

export interface GoBuild {
  moduleDir: string;
  /** Packages to build ('.' for the module's own main package). */
  packages: string[];
  ldflags: string[];
  tags?: string[];
}

/** The files a build depends on: go.mod, go.sum and the module's own Go sources. */
export async function goInputs(build: GoBuild): Promise<(string | Buffer)[]> {
  const files = (await readdir(build.moduleDir)).filter((f) => /\.go$|^go\.(mod|sum)$/.test(f)).sort();
  const parts: (string | Buffer)[] = [];
  for (const file of files) parts.push(file, await readFile(join(build.moduleDir, file)));
  const { stdout } = await run(goBinary(), ['env', 'GOVERSION']);
  parts.push(stdout.trim(), build.packages.join(' '), build.ldflags.join(' '), (build.tags ?? []).join(','));
  return parts;
}

/** Builds into `out` (a directory; each binary is named after its package's last element). */
export async function goBuild(build: GoBuild, out: string): Promise<void> {
  const args = ['build', '-trimpath', '-ldflags', ['-s', '-w', ...build.ldflags].join(' ')];
  if (build.tags?.length) args.push('-tags', build.tags.join(','));
  args.push('-o', `${out}/`, ...build.packages);
  await run('nice', ['-n', '10', goBinary(), ...args], {
    cwd: build.moduleDir,
    env: { ...process.env, CGO_ENABLED: '0', GOFLAGS: '-mod=readonly' },
    maxBuffer: 64 * 1024 * 1024,
  }).catch((error: { stderr?: string; message: string }) => {
    throw new Error(`go build in ${build.moduleDir} failed: ${error.stderr || error.message}`);
  });
}
