import { env } from 'cloudflare:workers';
import { eq, inArray, sql } from 'drizzle-orm';
import { describe, expect, it, vi } from 'vitest';
import { createDb } from '../src/db/client';
import { byShape, prepared } from '../src/db/prepared';
import { likes, radioChannels, users } from '../src/db/schema';
import { radioResourceColumns } from '../src/catalogue/radio-resource';
import { seedChannels, station } from './helpers/catalogue';
import { quickUser } from './helpers/users';

// src/db/prepared.ts builds a query once and hands D1's batch an item shaped as Drizzle's
// own (`_prepare`, `mapResult`): internals of drizzle-orm, which package.json pins to one
// version. These tests fail when an upgrade changes that shape: then fix prepared.ts or
// drop it for the plain builder.

const userById = prepared((db) =>
  db
    .select()
    .from(users)
    .where(eq(users.id, sql.placeholder('id'))),
);
const channelNames = prepared((db) =>
  db
    .select({ id: radioChannels.id, name: radioChannels.name, active: radioChannels.isActive })
    .from(radioChannels)
    .where(eq(radioChannels.id, sql.placeholder('id'))),
);

describe('prepared queries', () => {
  it('give the rows, typed and mapped, that the same builder gives, alone and in a batch with builders', async () => {
    const db = createDb(env.DB);
    const user = await quickUser();
    const [channel] = await seedChannels([station({ name: 'Prepared FM' })]);
    const built = await db.select().from(users).where(eq(users.id, user.id));
    const [preparedRows, names, builderRows] = await db.batch([
      userById(db, { id: user.id }),
      channelNames(db, { id: channel! }),
      db.select().from(users).where(eq(users.id, user.id)),
    ]);
    expect(preparedRows).toEqual(built);
    expect(builderRows).toEqual(built);
    // Column mapping (camelCase keys, booleans from integers) is Drizzle's, through mapResult.
    expect(names).toEqual([{ id: channel, name: 'Prepared FM', active: true }]);
    expect(await db.batch([userById(db, { id: user.id })])).toEqual([built]);
  });

  it('fill their placeholders per call: one template, many values', async () => {
    const db = createDb(env.DB);
    const [a, b] = [await quickUser(), await quickUser()];
    const [first, second, none] = await db.batch([
      userById(db, { id: a.id }),
      userById(db, { id: b.id }),
      userById(db, { id: -1 }),
    ]);
    expect([first[0]?.email, second[0]?.email, none]).toEqual([a.email.toLowerCase(), b.email.toLowerCase(), []]);
  });

  it('map rows as the builder does: nested objects, mapped SQL, booleans, and a left join that found nothing', async () => {
    const db = createDb(env.DB);
    const user = await quickUser();
    const ids = await seedChannels([station({ name: 'Mapped FM' }), station({ name: 'Other FM', logo: null })]);
    await env.DB.prepare(
      "INSERT INTO likes (user_id, channel_id, created_at) VALUES (?, ?, '2026-01-01T00:00:00.000000Z')",
    )
      .bind(user.id, ids[0])
      .run();
    const cards = (viewer: number | ReturnType<typeof sql.placeholder>) =>
      db.select(radioResourceColumns(viewer)).from(radioChannels).orderBy(radioChannels.id);
    const preparedCards = prepared((build) =>
      build
        .select(radioResourceColumns(sql.placeholder('viewer')))
        .from(radioChannels)
        .where(inArray(radioChannels.id, sql`(SELECT value FROM json_each(${sql.placeholder('ids')}))`))
        .orderBy(radioChannels.id),
    );
    const joined = () =>
      db
        .select({ id: radioChannels.id, like: { user: likes.userId, at: likes.createdAt } })
        .from(radioChannels)
        .leftJoin(likes, eq(likes.channelId, radioChannels.id))
        .where(inArray(radioChannels.id, ids))
        .orderBy(radioChannels.id);
    const preparedJoined = prepared((build) =>
      build
        .select({ id: radioChannels.id, like: { user: likes.userId, at: likes.createdAt } })
        .from(radioChannels)
        .leftJoin(likes, eq(likes.channelId, radioChannels.id))
        .where(inArray(radioChannels.id, sql`(SELECT value FROM json_each(${sql.placeholder('ids')}))`))
        .orderBy(radioChannels.id),
    );
    const values = { viewer: user.id, ids: JSON.stringify(ids) };
    const [built, mine, builtJoined, mineJoined] = await db.batch([
      cards(user.id).where(inArray(radioChannels.id, ids)),
      preparedCards(db, values),
      joined(),
      preparedJoined(db, values),
    ]);
    expect(mine).toEqual(built);
    expect(JSON.stringify(mine)).toBe(JSON.stringify(built)); // the same keys in the same order
    expect(mine[0]).toMatchObject({
      is_liked: true,
      country: { id: expect.any(Number) },
      health: { status: 'unknown' },
    });
    expect(mineJoined).toEqual(builtJoined);
    expect(mineJoined.map((row) => row.like)).toEqual([{ user: user.id, at: '2026-01-01T00:00:00.000000Z' }, null]);
  });

  it('are built once per shape (byShape): the same shape gets the same templates', () => {
    const build = vi.fn((shape: { sort: string; anonymous: boolean }) => ({ shape }));
    const templates = byShape(build);
    const first = templates({ sort: 'name', anonymous: true });
    expect(templates({ sort: 'name', anonymous: true })).toBe(first);
    expect(templates({ sort: 'name', anonymous: false })).not.toBe(first);
    expect(build).toHaveBeenCalledTimes(2);
  });
});
