/**
 * Which network addresses an LLM connection may reach (SSRF): loopback, private, link-local,
 * shared, multicast, reserved and cloud-metadata addresses are refused unless the host name or
 * the address is whitelisted. Pure: no I/O.
 */
import { BlockList, isIP } from 'node:net';

export interface AddressPolicy {
  /** Lower-case host names allowed whatever they resolve to. */
  whitelistedHosts: string[];
  whitelistedIps: string[];
}

const BLOCKED = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  BLOCKED.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
  ['64:ff9b::', 96],
  ['100::', 64],
] as const)
  BLOCKED.addSubnet(net, prefix, 'ipv6');

/** Host names of cloud metadata services, refused before any lookup. */
const METADATA_HOSTS = new Set(['metadata.google.internal', 'metadata', 'instance-data']);

/** An IPv4 address mapped into IPv6 (`::ffff:10.0.0.1`) is judged as the IPv4 address. */
function unmapped(ip: string): string {
  const m = ip.toLowerCase().match(/^::ffff:(\d+\.\d+\.\d+\.\d+)$/);
  return m ? m[1]! : ip;
}

export function isBlockedAddress(ip: string): boolean {
  const plain = unmapped(ip);
  const family = isIP(plain);
  if (family === 0) return true;
  return BLOCKED.check(plain, family === 4 ? 'ipv4' : 'ipv6');
}

/** Why `host` may not be reached at `address`, or undefined when it may. */
export function refusalOf(policy: AddressPolicy, host: string, address: string): string | undefined {
  const h = host.toLowerCase().replace(/^\[|\]$/g, '');
  if (policy.whitelistedHosts.includes(h)) return undefined;
  if (policy.whitelistedIps.includes(unmapped(address))) return undefined;
  if (METADATA_HOSTS.has(h)) return `host ${host} is a cloud metadata service`;
  if (isBlockedAddress(address))
    return `host ${host} resolves to ${address}, a loopback, private, link-local or reserved address`;
  return undefined;
}

/** Scheme and shape of a URL the server will call (`field` names it); the addresses are checked separately. */
export function baseUrlProblem(text: string, field = 'baseURL'): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return `${field}: not a valid URL`;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return `${field}: must use http or https`;
  if (url.username || url.password) return `${field}: must not carry credentials`;
  return undefined;
}
