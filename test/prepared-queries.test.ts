import { env } from 'cloudflare:workers';
import { eq, sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { createDb } from '../src/db/client';
import { prepared } from '../src/db/prepared';
import { radioChannels, users } from '../src/db/schema';
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
});
