import { clientNetwork } from '../lib/client-ip';

/**
 * Crowd signals: what many users send that ranks or decides something for everyone
 * (plays in `play_count`, trending and charts; searched terms in trending; players'
 * failure reports asking for a stream check). Accounts are cheap (60 an hour from one
 * address), so a signal counts by who sends it and from where, not by how often:
 * - a user counts once per subject per window (the hour) where nothing else says how often
 *   they count (a searched term); a play counts by its own rule (again after 60 seconds);
 * - one network (lib/client-ip.ts `clientNetwork`: IPv4 /24, IPv6 /48) counts at most
 *   `CROWD_MAX_PER_NETWORK` times per subject per window, however many accounts it holds;
 * - what decides (a stream check) needs distinct users on distinct networks
 *   (streams/health.ts).
 * Then 60 fresh accounts behind one address move a channel's plays or a term's count by
 * at most 10 an hour, and cannot ask for a check at all.
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
