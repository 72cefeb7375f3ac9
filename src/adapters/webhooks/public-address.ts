import { isIP } from 'node:net';

/**
 * Which addresses a webhook may be sent to: public unicast ones only, so that a subscriber cannot
 * make the gateway call into its own network (loopback, private, link-local and its cloud metadata
 * service at 169.254.169.254, unique-local, carrier-grade NAT, multicast, reserved, documentation).
 * The ranges are IANA's special-purpose registries (RFC 6890 and its updates); an IPv6 address that
 * carries an IPv4 one (mapped, NAT64, 6to4) is judged by the IPv4 address it carries.
 */

/** [first address, prefix length] of each IPv4 range that is not public. */
const IPV4_REFUSED: ReadonlyArray<readonly [string, number]> = [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8], // private (RFC 1918)
  ['100.64.0.0', 10], // carrier-grade NAT (RFC 6598)
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local, the cloud metadata services among them
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.88.99.0', 24], // 6to4 relay anycast
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation
  ['203.0.113.0', 24], // documentation
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, and the broadcast address
];

/** [first address, prefix length] of each IPv6 range that is not public (those carrying IPv4 are handled apart). */
const IPV6_REFUSED: ReadonlyArray<readonly [string, number]> = [
  ['::', 96], // unspecified, loopback, IPv4-compatible (deprecated)
  ['64:ff9b:1::', 48], // local-use NAT64
  ['100::', 64], // discard-only
  ['2001::', 23], // IETF protocol assignments (Teredo among them)
  ['2001:db8::', 32], // documentation
  ['fc00::', 7], // unique-local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
];

/** Where an IPv6 address carries an IPv4 one: the prefix, its length, and the bit offset of the IPv4 address. */
const IPV6_CARRYING_IPV4: ReadonlyArray<readonly [string, number, number]> = [
  ['::ffff:0:0', 96, 96], // IPv4-mapped
  ['64:ff9b::', 96, 96], // NAT64 (RFC 6052)
  ['2002::', 16, 16], // 6to4
];

/** Whether `address` (an IPv4 or IPv6 literal, brackets allowed) is a public unicast address. */
export function isPublicAddress(address: string): boolean {
  const literal = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  const version = isIP(literal);
  if (version === 4) return isPublicIpv4(ipv4Value(literal));
  if (version === 6) return isPublicIpv6(ipv6Value(literal));
  return false;
}

function isPublicIpv4(value: bigint): boolean {
  return !IPV4_REFUSED.some(([first, length]) => inRange(value, ipv4Value(first), length, 32));
}

function isPublicIpv6(value: bigint): boolean {
  for (const [prefix, length, offset] of IPV6_CARRYING_IPV4) {
    if (inRange(value, ipv6Value(prefix), length, 128)) return isPublicIpv4((value >> BigInt(128 - offset - 32)) & 0xffff_ffffn);
  }
  return !IPV6_REFUSED.some(([first, length]) => inRange(value, ipv6Value(first), length, 128));
}

function inRange(value: bigint, first: bigint, length: number, bits: number): boolean {
  const shift = BigInt(bits - length);
  return value >> shift === first >> shift;
}

function ipv4Value(address: string): bigint {
  return address.split('.').reduce((value, part) => (value << 8n) | BigInt(Number(part)), 0n);
}

/** An IPv6 literal (already checked by `isIP`) as a 128-bit number; a zone (`%eth0`) is dropped, a trailing dotted quad read. */
function ipv6Value(address: string): bigint {
  let text = address.split('%')[0] ?? '';
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted !== null) {
    const v4 = Number(ipv4Value(dotted[1] ?? '0.0.0.0'));
    text = `${text.slice(0, dotted.index)}${((v4 >>> 16) & 0xffff).toString(16)}:${(v4 & 0xffff).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const headGroups = head === '' ? [] : head.split(':');
  const tailGroups = tail === undefined || tail === '' ? [] : tail.split(':');
  const groups = tail === undefined ? headGroups : [...headGroups, ...new Array<string>(8 - headGroups.length - tailGroups.length).fill('0'), ...tailGroups];
  return groups.reduce((value, group) => (value << 16n) | BigInt(parseInt(group, 16)), 0n);
}
