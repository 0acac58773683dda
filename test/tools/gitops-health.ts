// The GitOps health checkers the tests run against ObservabilityService objects, built once from
// the Go module proxy (test/tools/gitops-health: go.mod pins the versions) and cached by the hash
// of that module: `kstatus` (sigs.k8s.io/cli-utils/pkg/kstatus/status, what Flux and
// `kubectl wait`-style tools compute) and `luahealth` (gopher-lua, the interpreter Argo CD runs
// its resource.customizations health scripts in).
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
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

/** The directory holding both binaries; builds them on the first call on this machine. */
export async function ensureGitopsHealth(
  log: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
): Promise<string> {
  return ensureBuilt(
    {
      name: 'gitops-health',
      label: 'GitOps health checkers (kstatus, gopher-lua)',
      // goInputs hashes the module's top directory; the two main packages live one level down.
      inputs: async () => [
        ...(await goInputs(build)),
        ...(await Promise.all(
          build.packages.map(async (pkg) => readFile(join(build.moduleDir, pkg, 'main.go'))),
        )),
      ],
      async build(out) {
        await goBuild(build, out);
        return {};
      },
    },
    stepReporter(log),
  );
}

let built: Promise<string> | undefined;
/** Built (or found in the cache) once per process. */
const binaries = () => {
  built ??= ensureGitopsHealth();
  return built;
};

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

interface Judged {
  metadata: { generation?: number };
  status?: { observedGeneration?: number; conditions?: { type: string; status: string }[] };
}

/**
 * What kstatus and the Argo CD check must say of an object, from its conditions alone (kstatus's
 * documented contract): a status older than the spec is still moving, Stalled=True failed,
 * Ready=True current, Paused=True suspended for Argo CD, anything else moving.
 */
export function expectedHealth(o: Judged): { kstatus: string; argo: string } {
  const isTrue = (type: string) =>
    o.status?.conditions?.some((c) => c.type === type && c.status === 'True') ?? false;
  if ((o.status?.observedGeneration ?? 0) < (o.metadata.generation ?? 0))
    return { kstatus: 'InProgress', argo: 'Progressing' };
  if (isTrue('Stalled')) return { kstatus: 'Failed', argo: 'Degraded' };
  if (isTrue('Ready')) return { kstatus: 'Current', argo: 'Healthy' };
  if (isTrue('Paused')) return { kstatus: 'InProgress', argo: 'Suspended' };
  return { kstatus: 'InProgress', argo: 'Progressing' };
}
