import { z } from '@hono/zod-openapi';
import { getTableColumns, type Table } from 'drizzle-orm';
import { createSchemaFactory } from 'drizzle-zod';

/**
 * Resources whose API shape is a table's own columns (Genre, Playlist, most of User) are derived from the table: one
 * field list gives both the zod schema (`apiSchema`) and the select that reads it (`apiColumns`), so that the table,
 * the API schema and the mapping cannot drift apart.
 */
export const { createSelectSchema } = createSchemaFactory({ zodInstance: z });

/** `createdAt` → `created_at`, as a type. */
export type SnakeCase<S extends string> = S extends `${infer Head}${infer Tail}`
  ? `${Head extends Lowercase<Head> ? Head : `_${Lowercase<Head>}`}${SnakeCase<Tail>}`
  : S;

/** `createdAt` → `created_at`. */
export const snakeCase = <S extends string>(name: S) =>
  // eslint-disable-next-line @typescript-eslint/no-unsafe-type-assertion -- the type above, spelled as code
  name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`) as SnakeCase<S>;

type Renamed<T, K extends keyof T & string> = { [P in K as SnakeCase<P>]: T[P] };

/** The zod shape of `fields` of a table's select schema, under their API names. */
export function apiSchema<Shape extends z.ZodRawShape, K extends keyof Shape & string>(
  schema: z.ZodObject<Shape>,
  fields: readonly K[],
) {
  // eslint-disable-next-line @typescript-eslint/no-unsafe-type-assertion -- each API name holds its column's schema
  const shape = Object.fromEntries(fields.map((field) => [snakeCase(field), schema.shape[field]])) as Renamed<Shape, K>;
  return z.object(shape);
}

/** The columns of `fields` under their API names: a select that reads the resource. */
export function apiColumns<T extends Table, K extends keyof T['_']['columns'] & string>(
  table: T,
  fields: readonly K[],
): Renamed<T['_']['columns'], K> {
  const columns = getTableColumns(table);
  // eslint-disable-next-line @typescript-eslint/no-unsafe-type-assertion -- each API name holds its column
  return Object.fromEntries(fields.map((field) => [snakeCase(field), columns[field]])) as Renamed<T['_']['columns'], K>;
}
