import {
  convertIPv4BinaryToString,
  convertIPv4MappedIPv6ToIPv4,
  convertIPv4ToBinary,
  convertIPv6BinaryToString,
  convertIPv6ToBinary,
  distinctRemoteAddr,
  isIPv4MappedIPv6,
} from 'hono/utils/ipaddr';

/** A parsed address (Hono's parser): an IPv4 address in 32 bits, any other in 128; an IPv4-mapped one as IPv4. */
function parse(raw: string | null | undefined): { v4: bigint } | { v6: bigint } | null {
  const text = raw?.trim().replace(/%.*$/, '') ?? ''; // a zone id (`fe80::1%eth0`) names no other host
  try {
    const kind = distinctRemoteAddr(text);
    if (kind === 'IPv4') return { v4: convertIPv4ToBinary(text) };
    if (kind !== 'IPv6') return null;
    const v6 = convertIPv6ToBinary(text);
    return isIPv4MappedIPv6(v6) ? { v4: convertIPv4MappedIPv6ToIPv4(v6) } : { v6 };
  } catch {
    return null;
  }
}

/** The first `bits` of an IPv6 address, as Hono writes addresses, with its prefix length. */
const v6Prefix = (v6: bigint, bits: number) =>
  `${convertIPv6BinaryToString((v6 >> BigInt(128 - bits)) << BigInt(128 - bits))}/${bits}`;

/**
 * The key a client's address is limited by: IPv4 as it is (an IPv4-mapped IPv6 address as the IPv4 address it
 * carries), any other IPv6 address by its /64: one subscriber usually holds a whole /64, so keying by the full
 * address would give each of them 2^64 buckets. Null when `raw` is not an IP address.
 */
export function clientIpKey(raw: string | null | undefined): string | null {
  const address = parse(raw);
  if (!address) return null;
  return 'v4' in address ? convertIPv4BinaryToString(address.v4) : v6Prefix(address.v6, 64);
}

/**
 * The network a client's address belongs to, for crowd signals (crowd/rules.ts): an IPv4 address by its /24, an
 * IPv6 address by its /48. One operator, one office or one cloud machine usually holds a whole /24 or /48, so
 * accounts behind it are one network however many addresses they use. Null when `raw` is not an IP address.
 */
export function clientNetwork(raw: string | null | undefined): string | null {
  const address = parse(raw);
  if (!address) return null;
  if ('v6' in address) return v6Prefix(address.v6, 48);
  return `${convertIPv4BinaryToString((address.v4 >> 8n) << 8n)}/24`;
}
