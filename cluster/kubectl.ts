// kubectl of the control plane's release against one kubeconfig.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

export type KubectlRunner = (args: string[], input?: string) => Promise<string>;

/** Runs kubectl with an optional manifest on stdin; rejects with kubectl's own message. */
export function kubectlRunner(kubectlPath: string, kubeconfigPath: string): KubectlRunner {
  return async (args, input) => {
    const child = run(kubectlPath, [`--kubeconfig=${kubeconfigPath}`, ...args], {
      maxBuffer: 64 * 1024 * 1024,
    });
    if (input !== undefined) child.child.stdin?.end(input);
    return (
      await child.catch((error: { stderr?: string; message: string }) => {
        throw new Error(`kubectl ${args.join(' ')}: ${(error.stderr ?? '').trim() || error.message}`);
      })
    ).stdout;
  };
}
