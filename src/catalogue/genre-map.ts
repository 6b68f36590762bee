import { foldText } from '../lib/text';

/** A genre of the catalogue and the Radio Browser tags that mean it. */
export interface GenreDefinition {
  name: string;
  slug: string;
  description: string;
  /** Tags (folded) that map to this genre as a whole tag or as a word of a tag. */
  tags: string[];
}

/**
 * The catalogue's genres. Radio Browser tags are free text (tens of thousands of
 * them); the import maps them onto this list and ignores the rest, so genres stay a
 * list a person can browse.
 */
export const GENRES: GenreDefinition[] = [
  {
    name: 'Pop',
    slug: 'pop',
    description: 'Current and classic pop hits.',
    tags: [
      'pop',
      'top 40',
      'top40',
      'hits',
      'chart',
      'charts',
      'contemporary hit radio',
      'chr',
      'adult contemporary',
      'ac',
      'j-pop',
      'jpop',
      'k-pop',
      'kpop',
      'europop',
    ],
  },
  {
    name: 'Rock',
    slug: 'rock',
    description: 'Classic, modern and hard rock.',
    tags: [
      'rock',
      'classic rock',
      'hard rock',
      'rock n roll',
      "rock'n'roll",
      'punk',
      'grunge',
      'aor',
      'progressive rock',
      'prog',
    ],
  },
  {
    name: 'Alternative & Indie',
    slug: 'alternative-indie',
    description: 'Alternative, indie and left-of-centre guitar music.',
    tags: ['alternative', 'indie', 'indie rock', 'alternative rock', 'indie pop', 'new wave', 'post-punk', 'shoegaze'],
  },
  {
    name: 'Metal',
    slug: 'metal',
    description: 'Heavy metal in all its forms.',
    tags: ['metal', 'heavy metal', 'death metal', 'black metal', 'thrash', 'metalcore'],
  },
  {
    name: 'Jazz',
    slug: 'jazz',
    description: 'Jazz from swing to fusion.',
    tags: ['jazz', 'smooth jazz', 'bebop', 'swing', 'big band', 'fusion', 'acid jazz', 'bossa nova'],
  },
  {
    name: 'Blues',
    slug: 'blues',
    description: 'Blues and its roots.',
    tags: ['blues', 'delta blues', 'chicago blues'],
  },
  {
    name: 'Classical',
    slug: 'classical',
    description: 'Classical music, opera and early music.',
    tags: [
      'classical',
      'classic',
      'klassik',
      'classique',
      'opera',
      'baroque',
      'symphony',
      'orchestra',
      'chamber music',
      'early music',
      'contemporary classical',
    ],
  },
  {
    name: 'Electronic',
    slug: 'electronic',
    description: 'Electronic music: techno, house, trance and more.',
    tags: [
      'electronic',
      'electronica',
      'techno',
      'house',
      'trance',
      'edm',
      'drum and bass',
      'dnb',
      'drum n bass',
      'dubstep',
      'idm',
      'electro',
      'deep house',
      'minimal',
    ],
  },
  {
    name: 'Dance',
    slug: 'dance',
    description: 'Club and dance floor music.',
    tags: ['dance', 'club', 'disco', 'eurodance', 'nu disco', 'funky house'],
  },
  {
    name: 'Ambient & Chillout',
    slug: 'ambient-chillout',
    description: 'Ambient, downtempo, lounge and chillout.',
    tags: [
      'ambient',
      'chillout',
      'chill',
      'lounge',
      'downtempo',
      'chill out',
      'trip hop',
      'trip-hop',
      'relax',
      'relaxing',
      'space',
      'drone',
      'new age',
      'meditation',
    ],
  },
  {
    name: 'Hip Hop',
    slug: 'hip-hop',
    description: 'Hip hop and rap.',
    tags: ['hip hop', 'hip-hop', 'hiphop', 'rap', 'urban', 'trap'],
  },
  {
    name: 'R&B & Soul',
    slug: 'rnb-soul',
    description: 'Rhythm and blues, soul and funk.',
    tags: ['rnb', 'r&b', 'r n b', 'soul', 'funk', 'motown', 'neo soul', 'gospel'],
  },
  {
    name: 'Reggae',
    slug: 'reggae',
    description: 'Reggae, dub, ska and dancehall.',
    tags: ['reggae', 'dub', 'ska', 'dancehall', 'roots reggae'],
  },
  {
    name: 'Country',
    slug: 'country',
    description: 'Country, bluegrass and Americana.',
    tags: ['country', 'bluegrass', 'americana', 'western', 'country music'],
  },
  {
    name: 'Folk',
    slug: 'folk',
    description: 'Folk, singer-songwriter and acoustic.',
    tags: ['folk', 'singer-songwriter', 'singer songwriter', 'acoustic', 'celtic', 'traditional'],
  },
  {
    name: 'Latin',
    slug: 'latin',
    description: 'Latin music: salsa, reggaeton, tango and more.',
    tags: [
      'latin',
      'latino',
      'salsa',
      'reggaeton',
      'tango',
      'bachata',
      'cumbia',
      'merengue',
      'latin pop',
      'musica latina',
    ],
  },
  {
    name: 'World',
    slug: 'world',
    description: 'Music from around the world.',
    tags: [
      'world',
      'world music',
      'worldbeat',
      'afrobeat',
      'african',
      'afro',
      'ethnic',
      'international',
      'chanson',
      'schlager',
      'balkan',
      'bollywood',
      'anime',
    ],
  },
  {
    name: 'Oldies',
    slug: 'oldies',
    description: 'Hits of the 50s to the 90s.',
    tags: ['oldies', '50s', '60s', '70s', '80s', '90s', 'retro', 'golden oldies', 'classic hits', 'decades'],
  },
  {
    name: 'Eclectic',
    slug: 'eclectic',
    description: 'Freeform and eclectic programming, curated by people.',
    tags: [
      'eclectic',
      'freeform',
      'variety',
      'mixed',
      'various',
      'community',
      'college',
      'college radio',
      'public radio',
      'independent',
    ],
  },
  {
    name: 'News',
    slug: 'news',
    description: 'News and current affairs.',
    tags: ['news', 'current affairs', 'nachrichten', 'info', 'information', 'noticias', 'actualites'],
  },
  {
    name: 'Talk',
    slug: 'talk',
    description: 'Talk, culture, documentaries and speech.',
    tags: [
      'talk',
      'speech',
      'culture',
      'kultur',
      'spoken word',
      'discussion',
      'documentary',
      'podcast',
      'comedy',
      'debate',
    ],
  },
  {
    name: 'Sports',
    slug: 'sports',
    description: 'Sports news and live commentary.',
    tags: ['sports', 'sport', 'football', 'soccer', 'baseball', 'cricket'],
  },
  {
    name: 'Religious',
    slug: 'religious',
    description: 'Christian and other religious programming.',
    tags: ['christian', 'religious', 'religion', 'worship', 'catholic', 'islamic', 'quran', 'church'],
  },
];

const bySlug = new Map(GENRES.map((genre) => [genre.slug, genre]));
const byTag = new Map<string, string>();
for (const genre of GENRES) for (const tag of genre.tags) byTag.set(tag, genre.slug);

export const genreDefinition = (slug: string) => bySlug.get(slug);

/**
 * Genre slugs for a Radio Browser `tags` string (comma-separated), in tag order, at
 * most `max`. A tag counts when it is a known tag, or when one of its words is.
 */
export function genresForTags(tags: string, max = 5): string[] {
  const found: string[] = [];
  for (const raw of tags.split(',')) {
    const tag = foldText(raw).trim().replace(/\s+/g, ' ');
    if (!tag) continue;
    const slug =
      byTag.get(tag) ??
      tag
        .split(/[\s/&+_-]+/)
        .map((word) => byTag.get(word))
        .find(Boolean);
    if (slug && !found.includes(slug)) found.push(slug);
    if (found.length === max) break;
  }
  return found;
}
