import { defineConfig } from 'drizzle-kit';

// One migrations folder for three tools: drizzle-kit writes it, wrangler applies it
// (`migrations_dir` in wrangler.toml) and the tests read it (test/apply-migrations.ts).
export default defineConfig({
  dialect: 'sqlite',
  schema: './src/db/schema.ts',
  out: './drizzle/migrations',
  // The FTS5 tables are declared in schema.ts for typing; their DDL is a custom migration.
  tablesFilter: ['!channel_search', '!genre_search'],
});
