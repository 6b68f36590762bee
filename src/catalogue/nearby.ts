import { and, between, or, sql, type SQL } from 'drizzle-orm';
import type { Db } from '../db/client';
import { radioChannels } from '../db/schema';

/** The mean Earth radius (IUGG), km. */
const EARTH_KM = 6371.0088;
const KM_PER_DEGREE = (Math.PI * EARTH_KM) / 180;
/** Index entries a nearby read considers at most; past it, the circle shrinks (see `nearbyIds`). */
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
  if (minLat === -90 || maxLat === 90) return { minLat, maxLat, lngRanges: [[-180, 180]] as [number, number][] };
  // The widest longitude span at the band's edge nearest a pole.
  const dLng = radiusKm / (KM_PER_DEGREE * Math.cos(radians(Math.max(Math.abs(minLat), Math.abs(maxLat)))));
  if (dLng >= 180) return { minLat, maxLat, lngRanges: [[-180, 180]] as [number, number][] };
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

/** Channels with coordinates inside the box: index entries only (`radio_channels_geo`), at most `cap`. */
export function inBox(db: Db, box: ReturnType<typeof boundingBox>, cap: number) {
  const longitudes: SQL[] = box.lngRanges.map(([west, east]) => between(radioChannels.geoLng, west, east));
  return db
    .select({
      id: radioChannels.id,
      lat: sql<number>`${radioChannels.geoLat}`,
      lng: sql<number>`${radioChannels.geoLng}`,
    })
    .from(radioChannels)
    .where(and(between(radioChannels.geoLat, box.minLat, box.maxLat), or(...longitudes)))
    .limit(cap);
}

/**
 * The ids of channels within `radiusKm` of (lat, lng), nearest first, with their
 * distance, at most `want`. Reads index entries of the bounding box only. When the box
 * holds more than `NEARBY_CANDIDATES` entries, the radius is halved until it does not,
 * so that a dense region never makes the read grow with the catalogue; the answer is
 * then the nearest channels within that smaller radius (a list that may be shorter than
 * `want` only where over 5,000 stations lie within the radius asked for).
 */
export async function nearbyIds(db: Db, lat: number, lng: number, radiusKm: number, want: number) {
  let radius = radiusKm;
  for (let attempt = 0; attempt < 10; attempt += 1) {
    const rows = await inBox(db, boundingBox(lat, lng, radius), NEARBY_CANDIDATES + 1);
    if (rows.length <= NEARBY_CANDIDATES) {
      return rows
        .map((row) => ({ id: row.id, distance: distanceKm(lat, lng, row.lat, row.lng) }))
        .filter((row) => row.distance <= radius)
        .sort((a, b) => a.distance - b.distance || a.id - b.id)
        .slice(0, want);
    }
    radius /= 2;
  }
  return [];
}
