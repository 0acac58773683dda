/**
 * The public Python SDKs from PyPI, one cached virtual environment per version under
 * `.cache/conformance/python/`. Installed once (a cross-process lock keeps parallel vitest
 * workers from installing the same version twice); a venv counts only once its marker is written,
 * so an interrupted install is redone.
 */
import { existsSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { withFileLock } from '../../cluster/lock.ts';
import { runCommand } from '../fixtures/processes.ts';
import { repoRoot } from '../tools/paths.ts';

/** One of each generation the spec names: v2 (refused in events_only), v3, v4 below and at 4.7, v5. */
export const PYTHON_SDK_VERSIONS = ['2.60.10', '3.14.6', '4.6.1', '4.7.1', '5.0.4'] as const;
export type PythonSdkVersion = (typeof PYTHON_SDK_VERSIONS)[number];

const cacheDir = join(repoRoot, '.cache', 'conformance', 'python');
const INSTALL_TIMEOUT_MS = 600_000;

export const venvDir = (version: string) => join(cacheDir, `langfuse-${version}`);
export const pythonOf = (version: string) => join(venvDir(version), 'bin', 'python');
const marker = (version: string) => join(venvDir(version), '.installed');

/** The system interpreter the venvs are made from (Python >= 3.9, which every version supports). */
const basePython = () => process.env['PYTHON'] ?? 'python3';

export async function ensurePythonSdk(version: string, progress: (line: string) => void): Promise<string> {
  if (existsSync(marker(version))) return pythonOf(version);
  return withFileLock(join(cacheDir, `.lock-${version}`), async () => {
    if (existsSync(marker(version))) return pythonOf(version);
    const started = Date.now();
    progress(`conformance: installing langfuse==${version} from PyPI into ${venvDir(version)}`);
    await rm(venvDir(version), { recursive: true, force: true });
    await runCommand('venv', basePython(), ['-m', 'venv', venvDir(version)], { timeoutMs: 120_000 });
    await runCommand(
      'pip',
      pythonOf(version),
      ['-m', 'pip', 'install', '--disable-pip-version-check', '--quiet', `langfuse==${version}`],
      { timeoutMs: INSTALL_TIMEOUT_MS },
    );
    await writeFile(marker(version), `${new Date().toISOString()}\n`);
    progress(`conformance: langfuse==${version} ready in ${Math.round((Date.now() - started) / 1000)} s`);
    return pythonOf(version);
  });
}
