// drizzle-kit's `migrations.js` of each object (drizzle/objects/<object>/) imports its
// `.sql` files as text: wrangler's `[[rules]] type = "Text"` for `**/*.sql` bundles them so.
declare module '*.sql' {
  const text: string;
  export default text;
}

declare module '*/migrations.js' {
  import type { ObjectMigrations } from '../db/object-storage';

  const migrations: ObjectMigrations;
  export default migrations;
}
