import { drizzle, type DrizzleSqliteDODatabase } from 'drizzle-orm/durable-sqlite';
import { migrate } from 'drizzle-orm/durable-sqlite/migrator';

/** Drizzle over a Durable Object's own SQLite storage. */
export type ObjectDb = DrizzleSqliteDODatabase;

/** An object's migrations as drizzle-kit writes them (`drizzle/objects/<object>/migrations.js`). */
export type ObjectMigrations = Parameters<typeof migrate>[1];

/**
 * Opens Drizzle over the object's storage and applies its migrations before any call
 * reaches the object: `blockConcurrencyWhile` holds every request and alarm until they
 * are done (docs/architecture.md#durable-object-storage). Call it from the constructor.
 */
export function openObjectStorage(ctx: DurableObjectState, migrations: ObjectMigrations): ObjectDb {
  const db = drizzle(ctx.storage);
  void ctx.blockConcurrencyWhile(() => migrate(db, migrations));
  return db;
}
