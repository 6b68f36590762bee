#!/usr/bin/env node
// node scripts/generate-synthetic-catalogue.mjs COUNT [FILE]
// Writes COUNT made-up stations in the Radio Browser export format (for import and
// benchmark runs; not real stations). Deterministic: the same COUNT gives the same file.
// Like Radio Browser's export, some broadcasters are listed once per stream (variants the
// import merges into one channel) and some share a homepage under other names.
import { writeFileSync } from 'node:fs';

const count = Number(process.argv[2] ?? 50_000);
const file = process.argv[3] ?? `bench/out/synthetic-${count}.json`;
const countries = [
  'GB',
  'DE',
  'FR',
  'US',
  'JP',
  'BR',
  'IN',
  'AU',
  'CA',
  'ES',
  'IT',
  'NL',
  'SE',
  'NO',
  'PL',
  'MX',
  'AR',
  'ZA',
  'KR',
  'CH',
];
const languages = [
  'en',
  'de',
  'fr',
  'en',
  'ja',
  'pt',
  'hi',
  'en',
  'en',
  'es',
  'it',
  'nl',
  'sv',
  'nb',
  'pl',
  'es',
  'es',
  'en',
  'ko',
  'de',
];
const tags = [
  'pop',
  'rock',
  'jazz',
  'classical',
  'news',
  'talk',
  'electronic,dance',
  'hip hop',
  'country',
  'reggae',
  'ambient,chillout',
  'metal',
  'folk',
  'latin,salsa',
  'soul,funk',
  'oldies,80s',
  'world',
  'indie,alternative',
  'sports',
  'blues',
];
const words = [
  'Radio',
  'FM',
  'Sound',
  'Wave',
  'City',
  'Beat',
  'Classic',
  'Hits',
  'Groove',
  'Live',
  'Nova',
  'Sky',
  'Star',
  'Sun',
  'Blue',
  'Metro',
  'Coast',
  'River',
  'Night',
  'Prime',
];
const codecs = ['MP3', 'AAC', 'AAC+', 'OGG', 'OPUS'];
// A point inside each country above (its largest city, roughly): stations are spread a few degrees around it.
const centres = [
  [51.5, -0.1],
  [52.5, 13.4],
  [48.9, 2.4],
  [40.7, -74.0],
  [35.7, 139.7],
  [-23.6, -46.6],
  [19.1, 72.9],
  [-33.9, 151.2],
  [43.7, -79.4],
  [40.4, -3.7],
  [41.9, 12.5],
  [52.4, 4.9],
  [59.3, 18.1],
  [59.9, 10.8],
  [52.2, 21.0],
  [19.4, -99.1],
  [-34.6, -58.4],
  [-26.2, 28.0],
  [37.6, 127.0],
  [47.4, 8.5],
];

let seed = 42;
const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
const pick = (list) => list[Math.floor(random() * list.length)];

/**
 * How Radio Browser lists one broadcaster's other streams: its name with a quality suffix, another codec and bitrate,
 * the same homepage (docs/catalogue.md#several-streams-per-channel). About one broadcaster in 16 has 2 to 4 streams.
 */
const variants = [
  { suffix: ' (AAC 64k)', codec: 'AAC+', bitrate: 64 },
  { suffix: ' HQ', codec: 'MP3', bitrate: 320 },
  { suffix: ' - 48 kbps', codec: 'AAC', bitrate: 48 },
  { suffix: ' [HLS]', codec: 'AAC', bitrate: 0, hls: 1, path: 'master.m3u8' },
  { suffix: ' mobile', codec: 'OPUS', bitrate: 32 },
  { suffix: '', codec: 'OGG', bitrate: 128, path: 'live.ogg' },
];

const stations = [];
for (let b = 0; stations.length < count; b += 1) {
  const c = b % countries.length;
  const name = `${pick(words)} ${pick(words)} ${b}`;
  // Every 40th broadcaster shares its homepage with the next one (a network: other names, not variants).
  const site = b % 40 === 1 ? b - 1 : b;
  const base = {
    name,
    url: `https://stream.synthetic.example/${b}/live.mp3`,
    url_resolved: `https://stream.synthetic.example/${b}/live.mp3`,
    homepage: `https://station-${site}.synthetic.example/`,
    favicon: `https://station-${b}.synthetic.example/logo.png`,
    tags: pick(tags),
    countrycode: countries[c],
    languagecodes: languages[c],
    codec: pick(codecs),
    bitrate: [64, 96, 128, 192, 320][b % 5],
    hls: 0,
    lastcheckok: 1,
    description: `${name}: synthetic station number ${b} for load tests.`,
    // Most stations have coordinates, as in Radio Browser's export (some have none).
    ...(b % 10 === 9
      ? {}
      : {
          geo_lat: Math.round((centres[c][0] + (random() - 0.5) * 6) * 1e4) / 1e4,
          geo_long: Math.round((centres[c][1] + (random() - 0.5) * 6) * 1e4) / 1e4,
        }),
  };
  stations.push(base);
  const extra = b % 16 === 7 ? 1 + (b % 3) : 0;
  for (let v = 0; v < extra && stations.length < count; v += 1) {
    const variant = variants[(b + v) % variants.length];
    const url = `https://stream.synthetic.example/${b}/${variant.path ?? `v${v}.${variant.codec.toLowerCase()}`}`;
    stations.push({
      ...base,
      name: `${name}${variant.suffix}`,
      url,
      url_resolved: url,
      codec: variant.codec,
      bitrate: variant.bitrate,
      hls: variant.hls ?? 0,
    });
  }
}
writeFileSync(file, JSON.stringify(stations));
console.log(`${count} synthetic stations written to ${file}`);
