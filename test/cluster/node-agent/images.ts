// The one table that says which container images this node can run and with what local
// executables. There are no images here: an image is a name for a set of commands on this machine.
// An image or command not listed fails the container with a clear reason instead of pretending.
import { basename } from 'node:path';
import { nodeBinary, observatoryCli, repoRoot } from '../paths.ts';

interface ImageEntry {
  /** What the image's ENTRYPOINT and CMD would be (used when a container omits command/args). */
  entrypoint: string[];
  cmd: string[];
  /** Executable name (basename of argv[0]) -> local argv prefix that replaces it. */
  commands: Record<string, string[]>;
  /** Working directory on this machine (Pod directory when absent). */
  cwd?: string;
  /** Defaults for the environment; the container's own env wins. */
  defaultEnv?: (podIP: string) => Record<string, string>;
}

const shellTools: Record<string, string[]> = {
  sh: ['/bin/sh'],
  sleep: ['/bin/sleep'],
  true: ['/bin/true'],
  false: ['/bin/false'],
  echo: ['/bin/echo'],
  cat: ['/bin/cat'],
  env: ['/usr/bin/env'],
};

export const imageTable: Record<string, ImageEntry> = {
  // The project's own image: the observatory CLI under this Node; command/args are the CLI's args.
  observatory: {
    entrypoint: ['observatory'],
    cmd: [],
    commands: { observatory: [nodeBinary, observatoryCli], node: [nodeBinary] },
    cwd: repoRoot,
    // Pods share the machine's network stack: a server must bind its own Pod address, not 0.0.0.0.
    defaultEnv: (podIP) => ({ HOST: podIP }),
  },
  // Small test servers and scripts.
  node: { entrypoint: ['node'], cmd: [], commands: { node: [nodeBinary], ...shellTools } },
  busybox: { entrypoint: [], cmd: ['sh'], commands: shellTools },
};

/** `registry.example/org/observatory:1.2@sha256:...` -> `observatory`. */
export function imageName(image: string): string {
  const withoutDigest = image.split('@')[0] ?? image;
  const lastSegment = withoutDigest.split('/').pop() ?? withoutDigest;
  return lastSegment.split(':')[0] ?? lastSegment;
}

export interface LocalCommand {
  file: string;
  args: string[];
  cwd?: string;
  defaultEnv: Record<string, string>;
}

export type ImageResolution =
  | { ok: true; command: LocalCommand }
  | { ok: false; reason: 'ErrImagePull' | 'CreateContainerError'; message: string };

/**
 * Maps a container to a local command with Kubernetes semantics: `command` replaces the image
 * ENTRYPOINT, `args` replaces its CMD (and CMD is dropped when only `command` is given).
 */
export function resolveImage(
  image: string,
  command: string[] | undefined,
  args: string[] | undefined,
  podIP: string,
): ImageResolution {
  const name = imageName(image);
  const entry = imageTable[name];
  if (!entry) {
    return {
      ok: false,
      reason: 'ErrImagePull',
      message: `image ${image} is not known to the local node agent (known images: ${Object.keys(imageTable).join(', ')}; see test/cluster/node-agent/images.ts)`,
    };
  }
  const argv = [...(command?.length ? command : entry.entrypoint)];
  argv.push(...(args ?? (command?.length ? [] : entry.cmd)));
  const executable = argv[0];
  const local = executable === undefined ? undefined : entry.commands[basename(executable)];
  if (!executable || !local) {
    return {
      ok: false,
      reason: 'CreateContainerError',
      message: `command ${JSON.stringify(executable ?? '')} is not available in image ${name} on the local node agent (available: ${Object.keys(entry.commands).join(', ')})`,
    };
  }
  const [file, ...prefix] = local as [string, ...string[]];
  const resolved: LocalCommand = {
    file,
    args: [...prefix, ...argv.slice(1)],
    defaultEnv: entry.defaultEnv?.(podIP) ?? {},
  };
  if (entry.cwd) resolved.cwd = entry.cwd;
  return { ok: true, command: resolved };
}
