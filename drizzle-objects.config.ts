import { defineConfig } from 'drizzle-kit';

/**
 * drizzle-kit for the Durable Objects' own SQLite storage (not D1). Each object has its
 * tables and its migrations folder, so the config is chosen by `OBJECT`:
 * `OBJECT=play-counter npx drizzle-kit generate --config drizzle-objects.config.ts`, or
 * `npm run db:generate:objects` for every object (docs/architecture.md#durable-object-storage).
 * `driver: 'durable-sqlite'` makes drizzle-kit write `migrations.js`, which imports the
 * `.sql` files as text (wrangler's `[[rules]]` for `**\/*.sql`) for the object to apply.
 */
const objects = {
  'rate-limiter': ['./src/rate-limits/rate-limiter-schema.ts'],
  'search-trends': ['./src/search/search-trends-schema.ts', './src/crowd/crowd-schema.ts'],
  'play-counter': ['./src/activity/play-counter-schema.ts', './src/crowd/crowd-schema.ts'],
  'now-playing': ['./src/streams/now-playing-schema.ts'],
};

const name = process.env.OBJECT ?? '';
if (!(name in objects)) {
  throw new Error(`Set OBJECT to one of: ${Object.keys(objects).join(', ')} (got "${name}")`);
}

export default defineConfig({
  dialect: 'sqlite',
  driver: 'durable-sqlite',
  schema: objects[name as keyof typeof objects],
  out: `./drizzle/objects/${name}`,
});
