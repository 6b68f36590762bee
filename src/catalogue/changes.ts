import { z } from '@hono/zod-openapi';
import { asc, eq, gt, sql } from 'drizzle-orm';
import type { Db } from '../db/client';
import { read } from '../db/read';
import { changeSequence, radioChannels } from '../db/schema';
import { cursorExpired, fieldInvalid } from '../lib/errors';
import { readCursor, writeCursor } from '../lib/list-cursor';
import { channelVisible, radioResourceColumns, type RadioResource } from './radio-resource';

/** How long the feed remembers a channel's removal: an older cursor is a 410 (docs/api.md#changes-feed). */
export const CHANGES_MEMORY_DAYS = 30;
const MEMORY_MS = CHANGES_MEMORY_DAYS * 24 * 60 * 60 * 1000;
/** How far ahead of this isolate's clock another's may have stamped a cursor. */
const CLOCK_SKEW_MS = 5 * 60 * 1000;

/**
 * A cursor of the feed: the change it leads on from (`s`), the last change before the snapshot began (`h`: a hidden
 * channel changed at or before it was never in the snapshot, so it is no removal to report), and when the cursor was
 * made (`t`, ms), for the 30 days, and the counter's epoch (`e`: a restored database has another).
 */
const changesCursor = z.object({
  l: z.literal('changes'),
  e: z.string().max(32),
  s: z.number().int().min(0),
  h: z.number().int().min(0),
  t: z.number().int(),
});
type ChangesCursor = z.infer<typeof changesCursor>;

interface ChangesPage {
  items: { changed: RadioResource[]; removed: number[] };
  meta: { next_cursor: string; has_more: boolean };
}

/**
 * One page of `GET /radios/changes` (docs/api.md#changes-feed): the channels changed after the cursor, in commit order
 * along the `change_seq` index, so `limit` + 1 rows whatever the catalogue's size; with the counter, where a snapshot
 * begins, and its epoch, whether the cursor belongs to this history of the catalogue (a restore starts another).
 */
export function changesPage(db: Db, since: string | undefined, limit: number, now: number) {
  const cursor: ChangesCursor | null = since === undefined ? null : readCursor(since, changesCursor, 'since');
  // A cursor from the future (edited by hand) would never expire.
  if (cursor && cursor.t > now + CLOCK_SKEW_MS) {
    throw fieldInvalid(
      'since',
      'The cursor is not valid: take it from meta.next_cursor of the previous page.',
      'cursor_invalid',
    );
  }
  if (cursor && now - cursor.t > MEMORY_MS) {
    throw cursorExpired(
      `The cursor is more than ${CHANGES_MEMORY_DAYS} days old: read the catalogue again from the start, without since.`,
    );
  }
  const after = cursor?.s ?? 0;
  const queries = [
    db
      .select({
        ...radioResourceColumns(0),
        seq: radioChannels.changeSeq,
        visible: sql<number>`${channelVisible}`.as('visible'),
      })
      .from(radioChannels)
      .where(gt(radioChannels.changeSeq, after))
      .orderBy(asc(radioChannels.changeSeq))
      .limit(limit + 1),
    db
      .select({ value: changeSequence.value, epoch: changeSequence.epoch })
      .from(changeSequence)
      .where(eq(changeSequence.id, 1)),
  ] as const;
  return read(queries, ([rows, counter]): ChangesPage => {
    const { value: top, epoch } = counter[0] ?? { value: 0, epoch: '' };
    if (cursor && cursor.e !== epoch) {
      throw cursorExpired(
        'The cursor belongs to an earlier history of the catalogue (it was restored from a backup): read it again from the start.',
      );
    }
    const snapshotEnd = cursor?.h ?? top;
    // The counter and the rows are read together, so no row is past `top`: on a read replica behind the one that
    // served the cursor (its place past `top`), there are none, and the next cursor stays at that place.
    const shown = rows.slice(0, limit);
    const changed: RadioResource[] = [];
    const removed: number[] = [];
    for (const { seq, visible, ...channel } of shown) {
      if (visible) changed.push(channel);
      else if (seq > snapshotEnd) removed.push(channel.id);
    }
    const next: ChangesCursor = { l: 'changes', e: epoch, s: shown.at(-1)?.seq ?? after, h: snapshotEnd, t: now };
    return {
      items: { changed, removed },
      meta: { next_cursor: writeCursor(next), has_more: rows.length > limit },
    };
  });
}
