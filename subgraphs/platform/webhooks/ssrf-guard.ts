import { lookup as lookupCallback, type LookupAddress, type LookupOptions } from 'node:dns';
import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

/**
 * Addresses a webhook must never reach (server-side request forgery): loopback, private,
 * carrier-grade NAT, link-local (which holds the cloud metadata service, 169.254.169.254), the
 * unspecified and multicast ranges, and their IPv6 counterparts. Checked at send time, on every
 * address the host resolves to, because DNS can change after a subscription is registered.
 */
const blocked = new BlockList();
for (const [network, prefix] of [
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
] as const) {
  blocked.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
  ['fd00:ec2::254', 128],
] as const) {
  blocked.addSubnet(network, prefix, 'ipv6');
}

export function isForbiddenAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return blocked.check(address, 'ipv4');
  if (family === 6) {
    // IPv4-mapped IPv6 (::ffff:10.0.0.1) is the IPv4 address in disguise.
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
    if (mapped) return blocked.check(mapped[1]!, 'ipv4');
    return blocked.check(address, 'ipv6');
  }
  return true;
}

export class ForbiddenDestinationError extends Error {
  constructor(host: string, address: string) {
    super(`refused: ${host} resolves to ${address}, a loopback, private, link-local or metadata address`);
    this.name = 'ForbiddenDestinationError';
  }
}

/**
 * Resolves the URL's host and answers the address to connect to, refusing forbidden ones unless
 * `allowPrivate` (WEBHOOK_ALLOW_PRIVATE_NETWORKS, for tests and the local profile). The caller
 * connects to the returned address, so a second resolution cannot swap it (DNS rebinding).
 */
export async function resolveDestination(url: URL, options: { allowPrivate: boolean }): Promise<string> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const addresses = isIP(host) ? [{ address: host }] : await lookup(host, { all: true, verbatim: true });
  if (addresses.length === 0) throw new Error(`${host} does not resolve`);
  if (!options.allowPrivate) {
    const bad = addresses.find((a) => isForbiddenAddress(a.address));
    if (bad) throw new ForbiddenDestinationError(host, bad.address);
  }
  return addresses[0]!.address;
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for sockets (`net.connect`/`tls.connect`, hence undici's `connect` options) that
 * refuses forbidden addresses: the check happens on the very resolution the socket connects to,
 * so DNS cannot answer differently between check and connect. Literal IP hosts skip `lookup`;
 * check them with {@link checkLiteralHost} first.
 */
export function guardedLookup(options: { allowPrivate: boolean }) {
  return (hostname: string, lookupOptions: LookupOptions, callback: LookupCallback): void => {
    lookupCallback(hostname, { ...lookupOptions, all: true }, (error, addresses) => {
      if (error) return callback(error, []);
      const list = addresses as LookupAddress[];
      if (list.length === 0) return callback(Object.assign(new Error(`${hostname} does not resolve`), { code: 'ENOTFOUND' }), []);
      if (!options.allowPrivate) {
        const bad = list.find((a) => isForbiddenAddress(a.address));
        if (bad) return callback(new ForbiddenDestinationError(hostname, bad.address), []);
      }
      if (lookupOptions.all) callback(null, list);
      else callback(null, list[0]!.address, list[0]!.family);
    });
  };
}

/** Throws when the URL's host is a literal forbidden IP address (no lookup happens for those). */
export function checkLiteralHost(url: URL, options: { allowPrivate: boolean }): void {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (!options.allowPrivate && isIP(host) && isForbiddenAddress(host)) throw new ForbiddenDestinationError(host, host);
}
