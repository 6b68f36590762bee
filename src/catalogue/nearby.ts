import { and, eq, sql } from 'drizzle-orm';
import { QueryBuilder } from 'drizzle-orm/sqlite-core';
import type { Db } from '../db/client';
import { read } from '../db/read';
import { radioChannels } from '../db/schema';
import { jsonField, jsonRows } from '../db/sql';
import { radioResourceColumns } from './radio-resource';

const qb = new QueryBuilder();

/** The mean Earth radius (IUGG), km. */
const EARTH_KM = 6371.0088;
const KM_PER_DEGREE = (Math.PI * EARTH_KM) / 180;
/** Cells per degree of the grid `radio_channels.geo_cell` is computed on (schema.ts), and its row stride. */
const CELLS_PER_DEGREE = 10;
const ROW = 4000;
/** The first ring a nearby read looks in, and how much farther each next one reaches (`ringRanges`). */
const FIRST_RADIUS_KM = 10;
const RING_GROWTH = 4;
/**
 * Visible stations a nearby read takes at most, nearest rings first: with the ranges it walks and twice `limit` channel
 * rows, a read stays near 1,000 rows at any catalogue size.
 */
export const NEARBY_CANDIDATES = 400;

const radians = (degrees: number) => (degrees * Math.PI) / 180;

/** Great-circle distance in km (haversine). */
export function distanceKm(lat1: number, lng1: number, lat2: number, lng2: number): number {
  const dLat = radians(lat2 - lat1);
  const dLng = radians(lng2 - lng1);
  const a = Math.sin(dLat / 2) ** 2 + Math.cos(radians(lat1)) * Math.cos(radians(lat2)) * Math.sin(dLng / 2) ** 2;
  return 2 * EARTH_KM * Math.asin(Math.min(1, Math.sqrt(a)));
}

/**
 * The latitude band and longitude ranges that hold every point within `radiusKm` of (lat, lng): two longitude ranges
 * when the box crosses ±180°, every longitude when the circle reaches or nears a pole.
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

/** Intervals of `outer` not in `inner` (both sorted, disjoint, inclusive integer ranges). */
function subtract(outer: [number, number][], inner: [number, number][]): [number, number][] {
  const out: [number, number][] = [];
  for (const [lo, hi] of outer) {
    let from = lo;
    for (const [a, b] of inner) {
      if (b < from || a > hi) continue;
      if (a > from) out.push([from, a - 1]);
      from = Math.max(from, b + 1);
    }
    if (from <= hi) out.push([from, hi]);
  }
  return out;
}

/** A box's cell ranges grouped by grid row, each row's sorted. */
function rowsOf(box: ReturnType<typeof boundingBox>): Map<number, [number, number][]> {
  const rows = new Map<number, [number, number][]>();
  for (const range of cellRanges(box)) {
    const row = Math.floor(range[0] / ROW);
    rows.set(
      row,
      [...(rows.get(row) ?? []), range].sort((a, b) => a[0] - b[0]),
    );
  }
  return rows;
}

/**
 * The cells within `radiusKm` of (lat, lng) as ranges of `geo_cell`, in a few rings outward (each range costs rows
 * read), each ring holding only cells the ones before it did not: read in this order, a ring's stations come first.
 */
export function ringRanges(lat: number, lng: number, radiusKm: number): [number, number][] {
  const centre = Math.floor((lat + 90) * CELLS_PER_DEGREE);
  const ranges: [number, number][] = [];
  let inner = new Map<number, [number, number][]>();
  for (let radius = Math.min(radiusKm, FIRST_RADIUS_KM); ; radius = Math.min(radiusKm, radius * RING_GROWTH)) {
    const outer = rowsOf(boundingBox(lat, lng, radius));
    const rows = [...outer.keys()].sort((a, b) => Math.abs(a - centre) - Math.abs(b - centre) || a - b);
    for (const row of rows) ranges.push(...subtract(outer.get(row) ?? [], inner.get(row) ?? []));
    if (radius >= radiusKm) return ranges;
    inner = outer;
  }
}

/**
 * `nearbyChannels`' statement: the point (`lat`, `lng`), the longitude's scale there, the ranges as JSON, and how many
 * of the nearest to keep.
 */
function nearbyStatement(
  db: Db,
  viewer: number,
  values: { ranges: string; lat: number; lng: number; scale: number; keep: number },
) {
  const { lat, lng, scale } = values;
  const candidates = db.$with('candidates').as(
    qb
      .select({
        id: sql<number>`${radioChannels.id}`.as('candidate_id'),
        lat: sql<number>`${radioChannels.geoLat}`.as('candidate_lat'),
        lng: sql<number>`${radioChannels.geoLng}`.as('candidate_lng'),
      })
      .from(jsonRows(values.ranges))
      // CROSS JOIN: the ranges in their order, each a range of the grid-cell index, until the cap.
      .crossJoin(radioChannels)
      .where(
        and(
          sql`${radioChannels.geoCell} BETWEEN ${jsonField('lo')} AND ${jsonField('hi')}`,
          // `+`: conditions on the rows, never an index of their own (the active-channel indexes would scan the catalogue).
          sql`+${radioChannels.isActive} = 1 AND +${radioChannels.countryActive} = 1`,
        ),
      )
      .limit(NEARBY_CANDIDATES),
  );
  const dLng = sql`(${candidates.lng} - ${lng})`;
  const wrapped = sql`(CASE WHEN ${dLng} > 180 THEN ${dLng} - 360 WHEN ${dLng} < -180 THEN ${dLng} + 360 ELSE ${dLng} END)`;
  const nearest = db.$with('nearest').as(
    qb
      .with(candidates)
      .select({
        id: sql<number>`${candidates.id}`.as('nearest_id'),
        flat: sql<number>`(${candidates.lat} - ${lat}) * (${candidates.lat} - ${lat}) + ${scale} * ${wrapped} * ${wrapped}`.as(
          'nearest_flat',
        ),
      })
      .from(candidates)
      .orderBy(sql`nearest_flat`, sql`nearest_id`)
      .limit(values.keep),
  );
  return db
    .with(candidates, nearest)
    .select(radioResourceColumns(viewer))
    .from(nearest)
    .crossJoin(radioChannels)
    .where(eq(radioChannels.id, nearest.id));
}

/**
 * The `want` visible channels nearest (lat, lng) within `radiusKm`, in one statement that reads ring by ring and stops
 * at `NEARBY_CANDIDATES`, so its cost does not depend on the point. SQLite keeps the nearest by a flat-Earth distance;
 * the great-circle distance ranks them here, exact when the `want`-th lies within the rings read whole.
 */
export function nearbyChannels(db: Db, lat: number, lng: number, radiusKm: number, want: number, viewerId: number) {
  const values = {
    ranges: JSON.stringify(ringRanges(lat, lng, radiusKm).map(([lo, hi]) => ({ lo, hi }))),
    lat,
    lng,
    scale: Math.cos(radians(lat)) ** 2,
    keep: want * 2,
  };
  return read([nearbyStatement(db, viewerId, values)] as const, ([rows]) =>
    rows
      .map((channel) => ({
        ...channel,
        distance: distanceKm(lat, lng, channel.geo?.lat ?? 0, channel.geo?.lng ?? 0),
      }))
      .filter((channel) => channel.geo && channel.distance <= radiusKm)
      .sort((a, b) => a.distance - b.distance || a.id - b.id)
      .slice(0, want),
  );
}
