import { sql, type SQL, type SQLWrapper } from 'drizzle-orm';

/**
 * How well a folded name matches a folded query, best first: 0 the whole name, 1 its
 * start, 2 the start of one of its words, 3 anywhere, 4 only elsewhere (the
 * description). `matchRankOf` computes the same in JavaScript.
 */
export function matchRank(name: SQLWrapper, q: string): SQL<number> {
  return sql<number>`(CASE WHEN ${name} = ${q} THEN 0
    WHEN substr(${name}, 1, length(${q})) = ${q} THEN 1
    WHEN instr(' ' || ${name}, ' ' || ${q}) > 0 THEN 2
    WHEN instr(${name}, ${q}) > 0 THEN 3 ELSE 4 END)`;
}

/** `matchRank` of a folded name for a folded query; null when the name does not hold it. */
export function matchRankOf(name: string, q: string): number | null {
  if (name === q) return 0;
  if (name.startsWith(q)) return 1;
  if (` ${name}`.includes(` ${q}`)) return 2;
  if (name.includes(q)) return 3;
  return null;
}
