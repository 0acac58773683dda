// The Docker engine kind runs its nodes in: Debian's docker.io, started by the caller with a
// configuration of its own (socket, data root under .cache/docker, state under /run), so it never
// meets a Docker the machine may run. The network rule holds at the engine:
// - no default bridge; the nodes sit on a bridge network of their own without masquerading, and a
//   rule first in the engine's DOCKER-USER chain drops whatever that bridge would forward anywhere
//   but back onto itself: a node reaches the host and the other nodes, never the machine's uplink.
//   (An `--internal` network would do the same, but the engine publishes no ports of one, and kind
//   reads the API server's published port to write its kubeconfig.) The host reaches a node at its
//   address on the bridge;
// - the engine's embedded DNS forwards names it does not know to 127.0.0.1 inside the node, where
//   nothing answers, instead of the machine's resolvers;
// - proxy variables point at a closed loopback port, so a stray pull fails at once.
// kind runs its nodes privileged. This engine (20.10) gives a privileged container every capability
// the kernel knows, and runc fails ("unable to apply caps") on a machine whose processes lack one
// in their bounding set (these machines lack CAP_SYS_RESOURCE). The engine's runtime is then runc
// behind a wrapper that drops those capabilities from the container's configuration, as newer
// engines and containerd do by granting privileged containers their own bounding set.
import { existsSync } from 'node:fs';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { cacheRoot } from '../paths.ts';
import { type Supervised, startProcess } from '../processes.ts';
import { waitFor } from '../wait.ts';
import { run } from './run.ts';

const stateDir = '/run/observatory-docker';
export const engineDataRoot = join(cacheRoot, 'docker');
const dataRoot = engineDataRoot;
const dockerHost = `unix://${stateDir}/docker.sock`;
/** The nodes' network, on a range none of the local cluster's devices use. */
export const nodeNetwork = {
  name: 'observatory-kind',
  bridge: 'obs-kind0',
  subnet: '172.29.0.0/24',
  gateway: '172.29.0.1',
};
/** The rule (iptables filter table) that keeps the nodes' traffic on their bridge. */
const guardRule = ['DOCKER-USER', '-i', nodeNetwork.bridge, '!', '-o', nodeNetwork.bridge, '-j', 'DROP'];
/** The environment docker and kind need to talk to this engine and its network. */
export const engineEnv = {
  DOCKER_HOST: dockerHost,
  KIND_EXPERIMENTAL_DOCKER_NETWORK: nodeNetwork.name,
  KIND_EXPERIMENTAL_PROVIDER: 'docker',
};

export const docker = (args: string[], input?: string | Buffer) =>
  run('docker', args, { env: engineEnv, input });

export interface Engine {
  process: Supervised;
  stop(): Promise<void>;
}

// Capability names by bit number (linux/capability.h).
const capabilityNames = [
  'CHOWN',
  'DAC_OVERRIDE',
  'DAC_READ_SEARCH',
  'FOWNER',
  'FSETID',
  'KILL',
  'SETGID',
  'SETUID',
  'SETPCAP',
  'LINUX_IMMUTABLE',
  'NET_BIND_SERVICE',
  'NET_BROADCAST',
  'NET_ADMIN',
  'NET_RAW',
  'IPC_LOCK',
  'IPC_OWNER',
  'SYS_MODULE',
  'SYS_RAWIO',
  'SYS_CHROOT',
  'SYS_PTRACE',
  'SYS_PACCT',
  'SYS_ADMIN',
  'SYS_BOOT',
  'SYS_NICE',
  'SYS_RESOURCE',
  'SYS_TIME',
  'SYS_TTY_CONFIG',
  'MKNOD',
  'LEASE',
  'AUDIT_WRITE',
  'AUDIT_CONTROL',
  'SETFCAP',
  'MAC_OVERRIDE',
  'MAC_ADMIN',
  'SYSLOG',
  'WAKE_ALARM',
  'BLOCK_SUSPEND',
  'AUDIT_READ',
  'PERFMON',
  'BPF',
  'CHECKPOINT_RESTORE',
];

/** Capabilities the kernel has but this process's bounding set lacks. */
async function missingCapabilities(): Promise<string[]> {
  const status = await readFile('/proc/self/status', 'utf8');
  const bounding = BigInt(`0x${/^CapBnd:\s*([0-9a-f]+)/m.exec(status)?.[1] ?? '0'}`);
  const last = Number((await readFile('/proc/sys/kernel/cap_last_cap', 'utf8')).trim());
  return capabilityNames.slice(0, last + 1).filter((_, bit) => !((bounding >> BigInt(bit)) & 1n));
}

/** A runc that first removes `missing` from the container's or process's configuration (compact
 * JSON, as containerd's shim writes it), so a privileged container asks only for what the machine can grant. */
function runcWrapper(missing: string[]): string {
  const edits = missing.flatMap((cap) => [
    `-e 's/"CAP_${cap}",//g'`,
    `-e 's/,"CAP_${cap}"//g'`,
    `-e 's/"CAP_${cap}"//g'`,
  ]);
  return [
    '#!/bin/sh',
    `# runc without ${missing.join(', ')} (missing from this machine's bounding set); written by cluster/kind/engine.ts`,
    "# The capabilities are in the bundle's config.json (create, run) or a process file (exec).",
    'files=""; previous=""',
    'for arg in "$@"; do',
    '  case "$previous" in --bundle|-b) files="$files $arg/config.json" ;; --process|-p) files="$files $arg" ;; esac',
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell parameter expansion, not a template
    '  case "$arg" in --bundle=*) files="$files ${arg#--bundle=}/config.json" ;; --process=*) files="$files ${arg#--process=}" ;; esac',
    '  previous="$arg"',
    'done',
    `for file in $files; do [ -f "$file" ] && sed -i ${edits.join(' ')} "$file"; done`,
    'exec /usr/sbin/runc "$@"',
    '',
  ].join('\n');
}

function daemonConfig(runtime: string | undefined): string {
  return JSON.stringify(
    {
      ...(runtime
        ? { runtimes: { 'runc-bounded': { path: runtime } }, 'default-runtime': 'runc-bounded' }
        : {}),
      bridge: 'none',
      // Left as it is: an engine that turns IP forwarding on also sets the FORWARD policy to DROP,
      // which would cut the local cluster's Pod traffic (bridged through iptables) on this machine.
      // The nodes need no forwarding: they talk to each other on their bridge, the host to them
      // directly and through the published port.
      'ip-forward': false,
      dns: ['127.0.0.1'],
      'data-root': join(dataRoot, 'data'),
      'exec-root': join(stateDir, 'exec'),
      pidfile: join(stateDir, 'docker.pid'),
      hosts: [dockerHost],
      'storage-driver': 'overlay2',
      'log-driver': 'json-file',
      'log-opts': { 'max-size': '10m' },
      'live-restore': false,
      features: { buildkit: false },
    },
    null,
    2,
  );
}

/** Starts the engine (or returns undefined when one already answers on its socket), then makes sure
 * the nodes' network and its guard rule exist. */
export async function startEngine(log: (line: string) => void): Promise<Engine | undefined> {
  let engine: Engine | undefined;
  if ((await docker(['version', '--format', '{{.Server.Version}}'])).code !== 0) {
    await mkdir(stateDir, { recursive: true });
    await mkdir(dataRoot, { recursive: true });
    const missing = await missingCapabilities();
    let runtime: string | undefined;
    if (missing.length) {
      runtime = join(dataRoot, 'runc-bounded');
      await writeFile(runtime, runcWrapper(missing));
      await chmod(runtime, 0o755);
      log(`runtime: runc without CAP_${missing.join(', CAP_')} (not in this machine's bounding set)`);
    }
    const config = join(dataRoot, 'daemon.json');
    await writeFile(config, `${daemonConfig(runtime)}\n`);
    const closed = 'http://127.0.0.1:9';
    const process_ = startProcess({
      name: 'dockerd',
      file: '/usr/sbin/dockerd',
      args: ['--config-file', config],
      env: {
        PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
        HTTP_PROXY: closed,
        HTTPS_PROXY: closed,
        NO_PROXY: '',
      },
      cwd: dataRoot,
      logPath: join(dataRoot, 'dockerd.log'),
    });
    engine = {
      process: process_,
      async stop() {
        // The engine removes the network's bridge and its own rules for it only when asked to.
        await docker(['network', 'rm', nodeNetwork.name]);
        await process_.stop(20_000);
        // The network (and its bridge) lives in the engine's data; the rule goes with the engine.
        await run('iptables', ['-w', '-D', ...guardRule]);
      },
    };
    await waitFor(
      `dockerd (log: ${process_.logPath})`,
      async () => {
        if (process_.status()) throw new Error(`dockerd exited: ${JSON.stringify(process_.status())}`);
        return (await docker(['version', '--format', '{{.Server.Version}}'])).code === 0;
      },
      { timeoutMs: 60_000, intervalMs: 500 },
    );
    log(
      `dockerd ${(await docker(['version', '--format', '{{.Server.Version}}'])).stdout.trim()} on ${dockerHost}`,
    );
  }
  // A network of an earlier layout (another bridge name, internal) is made again.
  const current = await docker([
    'network',
    'inspect',
    '--format',
    '{{.Internal}} {{index .Options "com.docker.network.bridge.name"}}',
    nodeNetwork.name,
  ]);
  if (current.code === 0 && current.stdout.trim() !== `false ${nodeNetwork.bridge}`) {
    await docker(['network', 'rm', nodeNetwork.name]);
  }
  if (current.code !== 0 || current.stdout.trim() !== `false ${nodeNetwork.bridge}`) {
    const created = await docker([
      'network',
      'create',
      '--driver',
      'bridge',
      '--subnet',
      nodeNetwork.subnet,
      '--gateway',
      nodeNetwork.gateway,
      '--opt',
      `com.docker.network.bridge.name=${nodeNetwork.bridge}`,
      '--opt',
      'com.docker.network.bridge.enable_ip_masquerade=false',
      nodeNetwork.name,
    ]);
    if (created.code !== 0) throw new Error(`docker network create: ${created.stderr.trim()}`);
  }
  // Checked first: the engine recreates DOCKER-USER empty, and a second run must not add it twice.
  if ((await run('iptables', ['-w', '-C', ...guardRule])).code !== 0) {
    const added = await run('iptables', ['-w', '-I', ...guardRule]);
    if (added.code !== 0) throw new Error(`iptables -I ${guardRule.join(' ')}: ${added.stderr.trim()}`);
  }
  log(`nodes' network ${nodeNetwork.subnet} on ${nodeNetwork.bridge}: iptables -I ${guardRule.join(' ')}`);
  return engine;
}

export function engineInstalled(): boolean {
  return existsSync('/usr/sbin/dockerd');
}
