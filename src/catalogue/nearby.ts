import { sql } from 'drizzle-orm';
import type { Db } from '../db/client';
import { countries, radioChannels } from '../db/schema';
import { jsonField, jsonRows } from '../db/sql';

/** The mean Earth radius (IUGG), km. */
const EARTH_KM = 6371.0088;
const KM_PER_DEGREE = (Math.PI * EARTH_KM) / 180;
/** Cells per degree of the grid `radio_channels.geo_cell` is computed on (schema.ts), and its row stride. */
const CELLS_PER_DEGREE = 10;
const ROW = 4000;
/** The first circle a nearby read looks in (the next ones: `nextRadius`). */
const FIRST_RADIUS_KM = 10;
/** Visible channels one circle may read at most; past it, the read stops at what it found. */
export const NEARBY_CANDIDATES = 5000;

const radians = (degrees: number) => (degrees * Math.PI) / 180;

/** Great-circle distance in km (haversine). */
export function distanceKm(lat1: number, lng1: number, lat2: number, lng2: number): number {
  const dLat = radians(lat2 - lat1);
  const dLng = radians(lng2 - lng1);
  const a = Math.sin(dLat / 2) ** 2 + Math.cos(radians(lat1)) * Math.cos(radians(lat2)) * Math.sin(dLng / 2) ** 2;
  return 2 * EARTH_KM * Math.asin(Math.min(1, Math.sqrt(a)));
}

/**
 * The latitude band and longitude ranges that hold every point within `radiusKm` of
 * (lat, lng): one longitude range, two when the box crosses ±180°, and every longitude
 * when the circle reaches a pole (or the band is too close to one for degrees of
 * longitude to mean anything).
 */
export function boundingBox(lat: number, lng: number, radiusKm: number) {
  const dLat = radiusKm / KM_PER_DEGREE;
  const minLat = Math.max(-90, lat - dLat);
  const maxLat = Math.min(90, lat + dLat);
  const everywhere = { minLat, maxLat, lngRanges: [[-180, 180]] as [number, number][] };
  if (minLat === -90 || maxLat === 90) return everywhere;
  // The widest longitude span, at the band's edge nearest a pole.
  const dLng = radiusKm / (KM_PER_DEGREE * Math.cos(radians(Math.max(Math.abs(minLat), Math.abs(maxLat)))));
  if (dLng >= 180) return everywhere;
  const west = lng - dLng;
  const east = lng + dLng;
  const lngRanges: [number, number][] =
    west < -180
      ? [
          [west + 360, 180],
          [-180, east],
        ]
      : east > 180
        ? [
            [west, 180],
            [-180, east - 360],
          ]
        : [[west, east]];
  return { minLat, maxLat, lngRanges };
}

/** The ranges of grid cells (`geo_cell`) that cover a box: one per latitude row and longitude range. */
export function cellRanges(box: ReturnType<typeof boundingBox>): [number, number][] {
  const index = (degrees: number, offset: number, max: number) =>
    Math.min(max, Math.floor((degrees + offset) * CELLS_PER_DEGREE));
  const ranges: [number, number][] = [];
  const south = index(box.minLat, 90, 180 * CELLS_PER_DEGREE);
  const north = index(box.maxLat, 90, 180 * CELLS_PER_DEGREE);
  for (let row = south; row <= north; row += 1) {
    for (const [west, east] of box.lngRanges) {
      ranges.push([
        row * ROW + index(west, 180, 360 * CELLS_PER_DEGREE),
        row * ROW + index(east, 180, 360 * CELLS_PER_DEGREE),
      ]);
    }
  }
  return ranges;
}

/**
 * Visible channels with coordinates in the cells of the box: for each range (a JSON list,
 * so any number of them is one parameter) a range of the index `radio_channels_geo_cell`,
 * then those channels' rows (SQLite does not cover from an index on a virtual column,
 * so the active flags cost no further row). At most `cap`.
 */
export function inBox(db: Db, box: ReturnType<typeof boundingBox>, cap: number) {
  const ranges = JSON.stringify(cellRanges(box).map(([lo, hi]) => ({ lo, hi })));
  return (
    db
      .select({
        id: radioChannels.id,
        lat: sql<number>`${radioChannels.geoLat}`.as('near_lat'),
        lng: sql<number>`${radioChannels.geoLng}`.as('near_lng'),
      })
      .from(jsonRows(ranges))
      .innerJoin(radioChannels, sql`${radioChannels.geoCell} BETWEEN ${jsonField('lo')} AND ${jsonField('hi')}`)
      // Visible channels only. `+`: filters on the rows, never an index of their own (the
      // active-channel indexes would scan the catalogue); the inactive countries come from a
      // partial index (usually empty), once per statement.
      .where(
        sql`+${radioChannels.isActive} = 1 AND +${radioChannels.countryId} NOT IN (SELECT ${countries.id} FROM ${countries} WHERE ${countries.isActive} = 0)`,
      )
      .limit(cap)
  );
}

/** How far past the density seen so far the next circle reaches (its area grows with the square of the radius). */
const MARGIN = 1.25;

/**
 * The next circle after one of `radius` km that held `found` of the `want` stations: as
 * far as the density it saw says `want` would be (with a margin), at least twice and at
 * most eight times as far; four times when it held none. Doubling blindly took up to six
 * round trips to D1 where stations are sparse.
 */
export function nextRadius(radius: number, found: number, want: number): number {
  if (found === 0) return radius * 4;
  return radius * Math.min(8, Math.max(2, Math.sqrt(want / found) * MARGIN));
}

/**
 * The ids of visible channels within `radiusKm` of (lat, lng), nearest first, with their
 * distance, at most `want`. It looks in growing circles (10 km, then as far as the
 * stations found so far say `want` would be: `nextRadius`, up to the radius asked for)
 * and stops at the first that holds `want` channels: those are then the nearest ones. So
 * a read costs about the `want` nearest stations' cells wherever the point is, not the
 * catalogue's size nor a crowded latitude band. A circle whose cells hold more than
 * `NEARBY_CANDIDATES` channels ends the search with what it holds (the first cells'),
 * unless it came from a jump past twice the last circle: then it steps back to twice.
 */
export async function nearbyIds(db: Db, lat: number, lng: number, radiusKm: number, want: number) {
  let last = 0;
  for (let radius = Math.min(radiusKm, FIRST_RADIUS_KM); ;) {
    const rows = await inBox(db, boundingBox(lat, lng, radius), NEARBY_CANDIDATES + 1);
    const overflow = rows.length > NEARBY_CANDIDATES;
    if (overflow && last > 0 && radius > last * 2) {
      radius = last * 2;
      continue;
    }
    const within = rows
      .map((row) => ({ id: row.id, distance: distanceKm(lat, lng, row.lat, row.lng) }))
      .filter((row) => row.distance <= radius)
      .sort((a, b) => a.distance - b.distance || a.id - b.id);
    if (within.length >= want || radius >= radiusKm || overflow) return within.slice(0, want);
    last = radius;
    radius = Math.min(radiusKm, nextRadius(radius, within.length, want));
  }
}
