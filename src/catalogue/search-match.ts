import { normaliseTerm } from '../lib/text';
import { SEARCH_ROWID_SPAN } from './writes';

/**
 * A row source of the ids (`m.id`) of channels whose name or description contains
 * `term`, through the trigram index. Terms of three characters or more use `MATCH`
 * (an index lookup); shorter ones fall back to `LIKE` over the index's text. Callers
 * put it first in a `CROSS JOIN`, so SQLite starts from the matches instead of walking
 * the whole catalogue and testing each channel.
 */
export function channelTextMatches(term: string, param: (value: unknown) => string): string {
  const folded = normaliseTerm(term);
  if (folded.length >= 3) {
    return `(SELECT rowid % ${SEARCH_ROWID_SPAN} AS id FROM channel_search WHERE channel_search MATCH ${param(`"${folded.replace(/"/g, '""')}"`)}) m`;
  }
  const like = param(`%${folded.replace(/[\\%_]/g, (ch) => `\\${ch}`)}%`);
  return `(SELECT rowid % ${SEARCH_ROWID_SPAN} AS id FROM channel_search WHERE name LIKE ${like} ESCAPE '\\' OR description LIKE ${like} ESCAPE '\\') m`;
}
