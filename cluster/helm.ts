// helm (built from the Go module proxy, see go-tools.ts) with its own cache, config and data
// directories, never the user's ~/.config/helm, and no kubeconfig unless one is passed.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { ensureHelm } from './go-tools.ts';
import { toolsCache } from './paths.ts';

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a binary to completion; resolves with its exit code and output (rejects only when it cannot start). */
export function runTool(
  binary: string,
  args: string[],
  options: { input?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<RunResult> {
  return new Promise<RunResult>((resolve, reject) => {
    const child = execFile(
      binary,
      args,
      { env: { ...process.env, ...options.env }, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
        if (error && code === -1) reject(error);
        else resolve({ code, stdout, stderr });
      },
    );
    if (options.input !== undefined) child.stdin!.end(options.input);
  });
}

const helmHome = join(toolsCache, 'helm-home');

export async function helm(args: string[]): Promise<RunResult> {
  return runTool(await ensureHelm(), args, {
    env: {
      HELM_CACHE_HOME: join(helmHome, 'cache'),
      HELM_CONFIG_HOME: join(helmHome, 'config'),
      HELM_DATA_HOME: join(helmHome, 'data'),
      KUBECONFIG: join(helmHome, 'no-kubeconfig'),
    },
  });
}
