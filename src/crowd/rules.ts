import { clientNetwork } from '../lib/client-ip';

/**
 * Crowd signals (docs/security.md#crowd-signals): plays and searched terms rank things for everyone, and accounts are
 * cheap, so in rankings a signal counts by who sends it and from where: a user once per subject and hour, and a
 * network (IPv4 /24, IPv6 /48) at most `CROWD_MAX_PER_NETWORK` times from new accounts and
 * `CROWD_MAX_ESTABLISHED_PER_NETWORK` times in all. Failure reports use the per-network number alone
 * (streams/health.ts). Counts of what happened (`play_count`) are not rankings: every counted play is in them.
 */

/** The window a user counts once in, per subject: the hour (the buckets of trending and charts). */
export const CROWD_WINDOW_MS = 3_600_000;

/** Contributions of new accounts on one network to one subject per window (and of any reporter, to reports). */
export const CROWD_MAX_PER_NETWORK = 10;

/**
 * Contributions of all accounts on one network to one subject per window: a ceiling for farms of old accounts
 * behind few networks, far above the honest listeners of one station that one carrier address carries in an hour.
 */
export const CROWD_MAX_ESTABLISHED_PER_NETWORK = 1_000;

/**
 * How old an account must be to count as established: registration allows 60 accounts per address an hour, and
 * accounts made for a burst are new when they are used; waiting a day for each batch is what this asks of a farm.
 */
export const ESTABLISHED_ACCOUNT_AGE_MS = 24 * 3_600_000;

/** How an account counts in rankings: `new` accounts are capped per network, `established` ones only by the ceiling. */
export type Standing = 'new' | 'established';

/**
 * The standing of an account created at `createdAt` (its row's ISO timestamp) as of `now`. A verified email does not
 * make an account established: a domain with a catch-all mailbox verifies any number of addresses in seconds. No row
 * (or a time that does not parse) is `new`.
 */
export function accountStanding(account: { createdAt: string } | undefined, now: number): Standing {
  const created = account ? Date.parse(account.createdAt) : Number.NaN;
  return now - created >= ESTABLISHED_ACCOUNT_AGE_MS ? 'established' : 'new';
}

/**
 * The network of a request without a client address. Cloudflare sets `CF-Connecting-IP`
 * on every request from the internet; those without it (tests, local tools) share one
 * network rather than each counting as its own.
 */
export const UNKNOWN_NETWORK = 'unknown';

/** The network a request comes from (`CF-Connecting-IP`), or `UNKNOWN_NETWORK`. */
export const requestNetwork = (c: { req: { header(name: string): string | undefined } }): string =>
  clientNetwork(c.req.header('cf-connecting-ip')) ?? UNKNOWN_NETWORK;
