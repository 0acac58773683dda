// Command-line tools the chart and its tests run (helm, kubeconform, kind) and the S3 server (versitygw), built from the Go module proxy with
// `go install <pkg>@<version>` at pinned versions and cached in .cache/tools/<name>-<version>/.
// The first caller builds (niced, under a lock so parallel test files never build twice); every
// later caller gets the cached binary's path at once.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { withFileLock } from '../server/platform/datastores/lock-file.ts';
import { goBinary, toolsCache } from './paths.ts';
import type { StepReporter } from './steps.ts';

const run = promisify(execFile);

export interface GoTool {
  name: string;
  /** Module path and version the binary is built from. */
  module: string;
  version: string;
  /** Main package inside the module. */
  pkg: string;
  /** -X flags a release build sets (given the module's source directory). */
  ldflags(moduleDir: string): Promise<string[]>;
}

export interface ToolBuildRecord {
  tool: string;
  version: string;
  seconds: number;
  bytes: number;
  builtAt: string;
  goVersion: string;
}

/** Helm 3. Its release Makefile also stamps the Kubernetes version it assumes by default (the one
 * after its client-go minor); we do the same so `helm template` without --kube-version behaves alike. */
export const helm: GoTool = {
  name: 'helm',
  module: 'helm.sh/helm/v3',
  version: 'v3.22.0',
  pkg: 'helm.sh/helm/v3/cmd/helm',
  async ldflags(moduleDir) {
    const goMod = await readFile(join(moduleDir, 'go.mod'), 'utf8');
    const clientGo = /k8s\.io\/client-go v0\.(\d+)\./.exec(goMod);
    const flags = [
      `-X helm.sh/helm/v3/internal/version.version=${this.version}`,
      '-X helm.sh/helm/v3/internal/version.gitTreeState=clean',
    ];
    if (clientGo) {
      for (const pkg of ['helm.sh/helm/v3/pkg/lint/rules', 'helm.sh/helm/v3/pkg/chartutil']) {
        flags.push(`-X ${pkg}.k8sVersionMajor=1`, `-X ${pkg}.k8sVersionMinor=${clientGo[1]}`);
      }
    }
    return flags;
  },
};

/** Versity Gateway: an S3-compatible server over a plain directory (Apache-2.0, one binary). */
export const versitygw: GoTool = {
  name: 'versitygw',
  module: 'github.com/versity/versitygw',
  version: 'v1.8.0',
  pkg: 'github.com/versity/versitygw/cmd/versitygw',
  async ldflags() {
    return [`-X main.Version=${this.version}`];
  },
};

export const kubeconform: GoTool = {
  name: 'kubeconform',
  module: 'github.com/yannh/kubeconform',
  version: 'v0.8.0',
  pkg: 'github.com/yannh/kubeconform/cmd/kubeconform',
  async ldflags() {
    return [`-X main.version=${this.version}`];
  },
};

/** kind: Kubernetes clusters whose nodes are containers of a Docker (or podman) engine. */
export const kind: GoTool = {
  name: 'kind',
  module: 'sigs.k8s.io/kind',
  version: 'v0.33.0',
  pkg: 'sigs.k8s.io/kind',
  async ldflags() {
    return [];
  },
};

export function toolDir(tool: Pick<GoTool, 'name' | 'version'>): string {
  return join(toolsCache, `${tool.name}-${tool.version}`);
}

async function go(args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<string> {
  // nice: a cold build takes minutes of CPU and must not starve whatever shares the machine.
  const { stdout } = await run('nice', ['-n', '10', goBinary(), ...args], {
    cwd: options.cwd ?? toolsCache,
    env: { ...process.env, ...options.env },
    maxBuffer: 64 * 1024 * 1024,
  }).catch((error: { stderr?: string; message: string }) => {
    throw new Error(`go ${args.join(' ')} failed: ${error.stderr || error.message}`);
  });
  return stdout;
}

/** Source directory of module@version in the module cache (downloads it through the proxy if needed). */
export async function moduleDir(module: string, version: string): Promise<string> {
  await mkdir(toolsCache, { recursive: true });
  // GOFLAGS=-mod=mod: outside any module, `go mod download` needs no go.mod.
  const info = JSON.parse(await go(['mod', 'download', '-json', `${module}@${version}`])) as {
    Dir?: string;
    Error?: string;
  };
  if (!info.Dir) throw new Error(`go mod download ${module}@${version}: ${info.Error ?? 'no directory'}`);
  return info.Dir;
}

async function readRecord(dir: string): Promise<ToolBuildRecord | undefined> {
  try {
    return JSON.parse(await readFile(join(dir, 'build.json'), 'utf8')) as ToolBuildRecord;
  } catch {
    return undefined;
  }
}

/** Record of the cached build (how long the cold build took), if there is one. */
export async function toolRecord(tool: GoTool): Promise<ToolBuildRecord | undefined> {
  return readRecord(toolDir(tool));
}

/** Path of the tool's binary; builds it on the first call on this machine. */
export async function ensureTool(tool: GoTool, log: (line: string) => void = () => {}): Promise<string> {
  const dir = toolDir(tool);
  const binary = join(dir, tool.name);
  const ready = async () => existsSync(binary) && (await readRecord(dir)) !== undefined;
  if (await ready()) return binary;
  await withFileLock(`${dir}.lock`, async () => {
    if (await ready()) return;
    const started = performance.now();
    log(`building ${tool.pkg}@${tool.version} from the Go module proxy (first run only)...`);
    const source = await moduleDir(tool.module, tool.version);
    const staging = await mkdtemp(join(toolsCache, `.${tool.name}-build-`));
    try {
      const ldflags = ['-s', '-w', ...(await tool.ldflags(source))].join(' ');
      await go(['install', '-trimpath', '-ldflags', ldflags, `${tool.pkg}@${tool.version}`], {
        env: { GOBIN: staging, CGO_ENABLED: '0', GOFLAGS: '' },
      });
      const goVersion = (await go(['env', 'GOVERSION'])).trim();
      await rm(dir, { recursive: true, force: true });
      await mkdir(dir, { recursive: true });
      await rename(join(staging, tool.name), binary);
      const record: ToolBuildRecord = {
        tool: tool.pkg,
        version: tool.version,
        seconds: Math.round((performance.now() - started) / 100) / 10,
        bytes: (await stat(binary)).size,
        builtAt: new Date().toISOString(),
        goVersion,
      };
      await writeFile(join(dir, 'build.json'), `${JSON.stringify(record, null, 2)}\n`);
      log(`built ${tool.name} ${tool.version} in ${record.seconds}s: ${binary}`);
    } finally {
      await rm(staging, { recursive: true, force: true });
    }
  });
  return binary;
}

/** The tool as a step of its own: one line when cached, else its build with a heartbeat. */
export async function toolStep(tool: GoTool, steps: StepReporter): Promise<string> {
  const built = await toolRecord(tool);
  if (built) {
    steps.cached(`${tool.name} ${tool.version}`, `cold build ${built.seconds}s`);
    return ensureTool(tool);
  }
  return steps.run(`${tool.name} ${tool.version} (Go module proxy)`, (progress) =>
    ensureTool(tool, progress),
  );
}

export const ensureHelm = (log?: (line: string) => void) => ensureTool(helm, log);
export const ensureKubeconform = (log?: (line: string) => void) => ensureTool(kubeconform, log);
export const ensureVersitygw = (log?: (line: string) => void) => ensureTool(versitygw, log);
