import { clientNetwork } from '../lib/client-ip';

/**
 * Crowd signals (docs/security.md#crowd-signals): plays, searched terms and failure reports rank or decide things for
 * everyone, and accounts are cheap, so a signal counts by who sends it and from where: a user once per subject and
 * hour (a play: again after 60 s), a network (IPv4 /24, IPv6 /48) at most `CROWD_MAX_PER_NETWORK` times.
 */

/** The window a user counts once in, per subject: the hour (the buckets of trending and charts). */
export const CROWD_WINDOW_MS = 3_600_000;

/** Contributions one network makes to one subject per window. */
export const CROWD_MAX_PER_NETWORK = 10;

/**
 * The network of a request without a client address. Cloudflare sets `CF-Connecting-IP`
 * on every request from the internet; those without it (tests, local tools) share one
 * network rather than each counting as its own.
 */
export const UNKNOWN_NETWORK = 'unknown';

/** The network a request comes from (`CF-Connecting-IP`), or `UNKNOWN_NETWORK`. */
export const requestNetwork = (c: { req: { header(name: string): string | undefined } }): string =>
  clientNetwork(c.req.header('cf-connecting-ip')) ?? UNKNOWN_NETWORK;
