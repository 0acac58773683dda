// The control-plane binary: built once from cluster/controlplane (Go modules) and cached under
// .cache/k8s-<version>/, keyed by a hash of the Go sources so an edited main.go is rebuilt. Several
// harnesses may ask at once (parallel test files): one builds under a lock, the others wait.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { withFileLock } from '../server/platform/datastores/lock-file.ts';
import { cacheRoot, controlPlaneSource } from './paths.ts';

const run = promisify(execFile);

/** The Kubernetes release the control plane is built from (must match go.mod). */
export const kubernetesVersion = 'v1.36.3';
export const controlPlaneDir = join(cacheRoot, `k8s-${kubernetesVersion}`);
export const controlPlaneBinary = join(controlPlaneDir, 'controlplane');
/** Names the multi-call binary answers to when invoked through a symlink. */
const components = ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'kubectl'];

export interface BuildRecord {
  sourceHash: string;
  seconds: number;
  bytes: number;
  builtAt: string;
}

async function sourceHash(): Promise<string> {
  const hash = createHash('sha256');
  const files = (await readdir(controlPlaneSource)).filter((f) => /\.go$|^go\.(mod|sum)$/.test(f)).sort();
  for (const file of files) {
    hash.update(file);
    hash.update(await readFile(join(controlPlaneSource, file)));
  }
  hash.update(kubernetesVersion);
  return hash.digest('hex');
}

async function readRecord(): Promise<BuildRecord | undefined> {
  try {
    return JSON.parse(await readFile(join(controlPlaneDir, 'build.json'), 'utf8')) as BuildRecord;
  } catch {
    return undefined;
  }
}

function goBinary(): string {
  if (process.env['GO']) return process.env['GO'];
  return existsSync('/usr/local/go/bin/go') ? '/usr/local/go/bin/go' : 'go';
}

/** The version variables kubectl and the servers report (and derive their compatibility version from). */
function ldflags(): string {
  const [major, minor] = kubernetesVersion.slice(1).split('.');
  const flags = ['-s', '-w'];
  for (const pkg of ['k8s.io/component-base/version', 'k8s.io/client-go/pkg/version']) {
    flags.push(
      `-X ${pkg}.gitVersion=${kubernetesVersion}`,
      `-X ${pkg}.gitMajor=${major}`,
      `-X ${pkg}.gitMinor=${minor}`,
      `-X ${pkg}.gitTreeState=clean`,
    );
  }
  return flags.join(' ');
}

async function build(hash: string, log: (line: string) => void): Promise<BuildRecord> {
  const started = performance.now();
  const output = `${controlPlaneBinary}.tmp-${process.pid}`;
  log(`building the Kubernetes ${kubernetesVersion} control plane from Go modules (first run only)...`);
  // nice: the build is long and must not starve whatever else shares the machine.
  await run(
    'nice',
    ['-n', '10', goBinary(), 'build', '-trimpath', '-ldflags', ldflags(), '-o', output, '.'],
    { cwd: controlPlaneSource, maxBuffer: 64 * 1024 * 1024, env: { ...process.env, CGO_ENABLED: '0' } },
  ).catch((error: { stderr?: string; message: string }) => {
    throw new Error(`control plane build failed: ${error.stderr || error.message}`);
  });
  await rename(output, controlPlaneBinary);
  for (const name of components) {
    const link = join(controlPlaneDir, name);
    await rm(link, { force: true });
    await symlink('controlplane', link);
  }
  const record: BuildRecord = {
    sourceHash: hash,
    seconds: Math.round((performance.now() - started) / 100) / 10,
    bytes: (await stat(controlPlaneBinary)).size,
    builtAt: new Date().toISOString(),
  };
  await writeFile(join(controlPlaneDir, 'build.json'), `${JSON.stringify(record, null, 2)}\n`);
  log(`built in ${record.seconds}s, ${(record.bytes / 1e6).toFixed(0)} MB: ${controlPlaneBinary}`);
  return record;
}

/** Whether the cached binary was built from the current sources. */
export async function controlPlaneFresh(): Promise<boolean> {
  return existsSync(controlPlaneBinary) && (await readRecord())?.sourceHash === (await sourceHash());
}

/** Path of the control-plane binary, building it when the cache lacks it or is stale. */
export async function ensureControlPlane(log: (line: string) => void = () => {}): Promise<string> {
  const hash = await sourceHash();
  const fresh = async () => existsSync(controlPlaneBinary) && (await readRecord())?.sourceHash === hash;
  if (await fresh()) return controlPlaneBinary;
  await mkdir(controlPlaneDir, { recursive: true });
  await withFileLock(join(controlPlaneDir, 'build.lock'), async () => {
    if (!(await fresh())) await build(hash, log);
  });
  return controlPlaneBinary;
}

export async function buildRecord(): Promise<BuildRecord | undefined> {
  return readRecord();
}
