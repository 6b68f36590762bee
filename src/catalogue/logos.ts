import { sql, type SQL } from 'drizzle-orm';
import { genres, radioChannels } from '../db/schema';

/**
 * A logo is never null (docs/catalogue.md#logos-that-always-render): without one of its own, a channel or a genre
 * shows the PNG placeholder this API serves, as a path that the envelope makes absolute for the request's host
 * (lib/envelope.ts `absolutePaths`).
 */
export const channelLogo: SQL.Aliased<string> =
  sql<string>`coalesce(nullif(${radioChannels.logo}, ''), '/api/v1/radios/' || ${radioChannels.id} || '/logo.png')`.as(
    'logo',
  );

export const genreLogo: SQL.Aliased<string> =
  sql<string>`coalesce(nullif(${genres.logo}, ''), '/api/v1/genres/' || ${genres.id} || '/logo.png')`.as('logo');
