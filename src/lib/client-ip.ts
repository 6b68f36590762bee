/** A parsed client address: IPv4 as four octets, IPv6 as eight 16-bit groups. */
type Address = { v4: number[] } | { v6: number[] };

/**
 * The key a client's address is limited by: IPv4 as it is, an IPv4-mapped IPv6 address
 * (`::ffff:192.0.2.1`) as the IPv4 address it carries, and any other IPv6 address by its
 * /64 prefix (`2001:db8:1:2::/64`): one subscriber usually holds a whole /64, so keying
 * by the full address would give each of them 2^64 buckets. Null when `raw` is not an IP
 * address.
 */
export function clientIpKey(raw: string | null | undefined): string | null {
  const address = parseAddress(raw);
  if (!address) return null;
  if ('v4' in address) return address.v4.join('.');
  return `${hex(address.v6.slice(0, 4))}::/64`;
}

/**
 * The network a client's address belongs to, for crowd signals (lib/crowd.ts): an IPv4
 * address by its /24 (`192.0.2.0/24`), an IPv4-mapped IPv6 address as the IPv4 address it
 * carries, any other IPv6 address by its /48 (`2001:db8:1::/48`). One operator, one
 * office or one cloud machine usually holds a whole /24 or /48, so accounts behind it are
 * one network however many addresses they use. Null when `raw` is not an IP address.
 */
export function clientNetwork(raw: string | null | undefined): string | null {
  const address = parseAddress(raw);
  if (!address) return null;
  if ('v4' in address) return `${address.v4.slice(0, 3).join('.')}.0/24`;
  return `${hex(address.v6.slice(0, 3))}::/48`;
}

const hex = (groups: number[]) => groups.map((g) => g.toString(16)).join(':');

/** `raw` as an address (an IPv4-mapped IPv6 address as its IPv4 address), or null. */
function parseAddress(raw: string | null | undefined): Address | null {
  const text = raw?.trim() ?? '';
  if (/^\d{1,3}(\.\d{1,3}){3}$/.test(text)) {
    const v4 = ipv4(text);
    return v4 ? { v4 } : null;
  }
  if (!text.includes(':')) return null;
  const groups = ipv6Groups(text);
  if (!groups) return null;
  // ::ffff:a.b.c.d, in either notation.
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    const [high, low] = [groups[6]!, groups[7]!];
    return { v4: [high >> 8, high & 0xff, low >> 8, low & 0xff] };
  }
  return { v6: groups };
}

function ipv4(text: string): number[] | null {
  const parts = text.split('.').map(Number);
  return parts.every((p) => p <= 255) ? parts : null;
}

/** The eight 16-bit groups of an IPv6 address (with `::` and a trailing dotted IPv4), or null. */
function ipv6Groups(text: string): number[] | null {
  let address = text.replace(/%.*$/, ''); // a zone id (`fe80::1%eth0`) names no other host
  const dotted = /(\d{1,3}(?:\.\d{1,3}){3})$/.exec(address);
  if (dotted) {
    const v4 = ipv4(dotted[1]!);
    if (!v4) return null;
    const [a = 0, b = 0, c = 0, d = 0] = v4;
    address = `${address.slice(0, -dotted[1]!.length)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const halves = address.split('::');
  if (halves.length > 2) return null;
  const parse = (part: string) => (part === '' ? [] : part.split(':'));
  const head = parse(halves[0]!);
  const tail = halves.length === 2 ? parse(halves[1]!) : [];
  const missing = 8 - head.length - tail.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return null;
  const groups = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill('0'), ...tail];
  if (!groups.every((g) => /^[0-9a-f]{1,4}$/i.test(g))) return null;
  return groups.map((g) => parseInt(g, 16));
}
