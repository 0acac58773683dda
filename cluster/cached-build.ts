// One cache entry per build: .cache/<name>/ holds the outputs and build.json, which records the
// hash of the build's inputs. A build runs when the record is missing or its hash differs, under a
// lock so parallel callers never build twice, into a staging directory renamed into place, so a
// killed build leaves no half-made entry.
import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { withFileLock } from '../server/platform/datastores/lock-file.ts';
import { cacheRoot } from './paths.ts';
import type { Log, StepReporter } from './steps.ts';

export interface BuildSpec {
  /** Directory name under .cache/ and the step's label. */
  name: string;
  label: string;
  /** Everything the output depends on (file contents, versions, flags), hashed into the key. */
  inputs(): Promise<(string | Buffer)[]>;
  /** Builds into `out` (an empty directory); returns facts worth recording (sizes, versions). */
  build(out: string, progress: Log): Promise<Record<string, unknown>>;
}

export interface BuildRecord {
  inputsHash: string;
  seconds: number;
  builtAt: string;
  facts: Record<string, unknown>;
}

export function cacheDir(name: string): string {
  return join(cacheRoot, name);
}

export async function inputsHash(spec: BuildSpec): Promise<string> {
  const hash = createHash('sha256');
  for (const part of await spec.inputs()) {
    hash.update(String(part.length));
    hash.update(part);
  }
  return hash.digest('hex');
}

export async function readRecord(name: string): Promise<BuildRecord | undefined> {
  try {
    return JSON.parse(await readFile(join(cacheDir(name), 'build.json'), 'utf8')) as BuildRecord;
  } catch {
    return undefined;
  }
}

/** The entry's directory, built first when missing or stale. */
export async function ensureBuilt(spec: BuildSpec, steps: StepReporter): Promise<string> {
  const dir = cacheDir(spec.name);
  const hash = await inputsHash(spec);
  const fresh = async () => (await readRecord(spec.name))?.inputsHash === hash;
  if (await fresh()) {
    const record = await readRecord(spec.name);
    steps.cached(spec.label, `cold build ${record?.seconds}s`);
    return dir;
  }
  await withFileLock(`${dir}.lock`, async () => {
    if (await fresh()) return;
    await steps.run(spec.label, async (progress) => {
      const started = performance.now();
      const staging = `${dir}.staging-${process.pid}`;
      await rm(staging, { recursive: true, force: true });
      await mkdir(staging, { recursive: true });
      try {
        const facts = await spec.build(staging, progress);
        const record: BuildRecord = {
          inputsHash: hash,
          seconds: Math.round((performance.now() - started) / 100) / 10,
          builtAt: new Date().toISOString(),
          facts,
        };
        await writeFile(join(staging, 'build.json'), `${JSON.stringify(record, null, 2)}\n`);
        await rm(dir, { recursive: true, force: true });
        await rename(staging, dir);
      } finally {
        await rm(staging, { recursive: true, force: true });
      }
    });
  });
  return dir;
}
