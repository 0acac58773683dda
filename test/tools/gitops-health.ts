// The GitOps health checkers the tests run against ObservabilityService objects, built once from
// the Go module proxy (test/tools/gitops-health: go.mod pins the versions) and cached by the hash
// of that module: `kstatus` (sigs.k8s.io/cli-utils/pkg/kstatus/status, what Flux and
// `kubectl wait`-style tools compute) and `luahealth` (gopher-lua, the interpreter Argo CD runs
// its resource.customizations health scripts in).
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { ensureBuilt } from '../../cluster/cached-build.ts';
import { type GoBuild, goBuild, goInputs } from '../../cluster/go-build.ts';
import { stepReporter } from '../../cluster/steps.ts';

const build: GoBuild = {
  moduleDir: join(import.meta.dirname, 'gitops-health'),
  packages: ['./kstatus', './luahealth'],
  ldflags: [],
};

export interface HealthVerdict {
  status: string;
  message: string;
}

async function binaries(): Promise<string> {
  return ensureBuilt(
    {
      name: 'gitops-health',
      label: 'GitOps health checkers (kstatus, gopher-lua)',
      inputs: () => goInputs(build),
      async build(out) {
        await goBuild(build, out);
        return {};
      },
    },
    stepReporter((line) => process.stderr.write(`${line}\n`)),
  );
}

function runJson(binary: string, args: string[], input: string): Promise<HealthVerdict> {
  return new Promise((resolve, reject) => {
    const child = execFile(binary, args, { timeout: 30_000 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${binary} failed: ${stderr || error.message}`));
      else resolve(JSON.parse(stdout) as HealthVerdict);
    });
    child.stdin!.end(input);
  });
}

/** The kstatus library's verdict on one object (InProgress, Current, Failed, ...). */
export async function kstatus(object: unknown): Promise<HealthVerdict> {
  return runJson(join(await binaries(), 'kstatus'), [], JSON.stringify(object));
}

/** An Argo CD Lua health script's verdict on one object (Progressing, Healthy, Degraded, ...). */
export async function argoHealth(scriptFile: string, object: unknown): Promise<HealthVerdict> {
  return runJson(join(await binaries(), 'luahealth'), [scriptFile], JSON.stringify(object));
}
