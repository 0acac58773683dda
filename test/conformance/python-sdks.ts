/**
 * Python packages from PyPI (the public SDKs, and PyArrow as an independent Parquet reader), one
 * cached virtual environment per package and version under `.cache/conformance/python/`. Installed
 * once (a cross-process lock keeps parallel vitest workers from installing the same version twice);
 * a venv counts only once its marker is written, so an interrupted install is redone.
 */
import { existsSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { withFileLock } from '../../server/platform/datastores/lock-file.ts';
import { runCommand } from '../fixtures/processes.ts';
import { repoRoot } from '../tools/paths.ts';

/** One of each generation the spec names: v2 (refused in events_only), v3, v4 below and at 4.7, v5. */
export const PYTHON_SDK_VERSIONS = ['2.60.10', '3.14.6', '4.6.1', '4.7.1', '5.0.4'] as const;
export type PythonSdkVersion = (typeof PYTHON_SDK_VERSIONS)[number];

/** The Parquet reader that judges the Parquet exports (Apache Arrow's own implementation). */
export const PYARROW_VERSION = '26.0.1';

const cacheDir = join(repoRoot, '.cache', 'conformance', 'python');
const INSTALL_TIMEOUT_MS = 600_000;

const venvName = (pkg: string, version: string) => `${pkg}-${version}`;
export const venvDir = (version: string) => join(cacheDir, venvName('langfuse', version));
export const pythonOf = (version: string) => join(venvDir(version), 'bin', 'python');

/** The system interpreter the venvs are made from (Python >= 3.9, which every version supports). */
const basePython = () => process.env['PYTHON'] ?? 'python3';

async function ensurePythonPackage(
  pkg: string,
  version: string,
  progress: (line: string) => void,
): Promise<string> {
  const dir = join(cacheDir, venvName(pkg, version));
  const python = join(dir, 'bin', 'python');
  const marker = join(dir, '.installed');
  if (existsSync(marker)) return python;
  return withFileLock(join(cacheDir, `.lock-${venvName(pkg, version)}`), async () => {
    if (existsSync(marker)) return python;
    const started = Date.now();
    progress(`conformance: installing ${pkg}==${version} from PyPI into ${dir}`);
    await rm(dir, { recursive: true, force: true });
    await runCommand('venv', basePython(), ['-m', 'venv', dir], { timeoutMs: 120_000 });
    await runCommand(
      'pip',
      python,
      ['-m', 'pip', 'install', '--disable-pip-version-check', '--quiet', `${pkg}==${version}`],
      { timeoutMs: INSTALL_TIMEOUT_MS },
    );
    await writeFile(marker, `${new Date().toISOString()}\n`);
    progress(`conformance: ${pkg}==${version} ready in ${Math.round((Date.now() - started) / 1000)} s`);
    return python;
  });
}

export const ensurePythonSdk = (version: string, progress: (line: string) => void) =>
  ensurePythonPackage('langfuse', version, progress);

export const ensurePyArrow = (progress: (line: string) => void) =>
  ensurePythonPackage('pyarrow', PYARROW_VERSION, progress);
