import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { messageOf, type Station } from '../api';
import { firstPage, type Page, type Walk } from '../lists';
import { pause, play, player } from '../player';
import { href } from '../router';
import { useStore } from '../store';
import { Alert, Loading, useLoad } from './common';
import { Icon } from './icons';

/**
 * A station's logo (the broadcaster's, or the API's placeholder). Decorative: the station's name is beside it. A logo
 * that does not load gives way to the placeholder.
 */
export function Logo({ station, size = 48 }: { station: Pick<Station, 'id' | 'logo'>; size?: number }) {
  const placeholder = `/api/v1/radios/${station.id}/logo.png`;
  const [broken, setBroken] = useState<string | null>(null);
  const src = broken === station.logo ? placeholder : station.logo;
  return (
    <img
      class="logo"
      src={src}
      alt=""
      width={size}
      height={size}
      loading="lazy"
      decoding="async"
      referrerpolicy="no-referrer"
      onError={() => src !== placeholder && setBroken(station.logo)}
    />
  );
}

const healthWords = { online: 'Online', offline: 'Offline', unknown: 'Not checked yet' } as const;

export function Health({ station }: { station: Station }) {
  const { status } = station.health;
  return <span class={`health ${status}`}>{healthWords[status]}</span>;
}

/** Play, or pause when this station is the one playing. */
export function PlayButton({ station, big = false }: { station: Station; big?: boolean }) {
  const state = useStore(player);
  const mine = state.station?.id === station.id;
  const active = mine && (state.status === 'playing' || state.status === 'loading');
  const label = `${active ? 'Pause' : 'Play'} ${station.name}`;
  return (
    <button
      type="button"
      class={big ? 'play big' : 'play'}
      aria-label={big ? undefined : label}
      onClick={() => (active ? pause() : play(station))}
    >
      <Icon name={active ? 'pause' : 'play'} />
      {big && <span>{active ? 'Pause' : 'Play'}</span>}
    </button>
  );
}

/** The line under a station's name: where it is from and what it plays. */
export function stationMeta(station: Station) {
  return [station.country.name, station.genres.map((g) => g.name).join(', ')].filter(Boolean).join(' · ');
}

export function StationRow({ station, extra }: { station: Station; extra?: ComponentChildren }) {
  return (
    <li class="station-row">
      <Logo station={station} />
      <div class="station-text">
        <a class="station-name" href={href(`/station/${station.id}`)}>
          {station.name}
        </a>
        <span class="station-meta">
          {stationMeta(station)}
          {station.health.status === 'offline' && (
            <>
              {' · '}
              <Health station={station} />
            </>
          )}
        </span>
        {extra && <span class="station-extra">{extra}</span>}
      </div>
      <PlayButton station={station} />
    </li>
  );
}

export function StationList<S extends Station>({
  stations,
  label,
  extra,
}: {
  stations: S[];
  label: string;
  extra?: (station: S) => ComponentChildren;
}) {
  return (
    <ul class="stations" aria-label={label}>
      {stations.map((station) => (
        <StationRow key={station.id} station={station} extra={extra?.(station)} />
      ))}
    </ul>
  );
}

/**
 * A list of stations read a page at a time, to its end: `walk(cursor)` walks it (lists.ts), "Show more" reads the
 * next page, and a status line says how many are shown. `deps` as useLoad's: when they change, the list starts again.
 */
export function PagedStations<S extends Station>({
  walk,
  deps = [],
  ...list
}: {
  walk: (cursor?: string) => Walk<S>;
  deps?: unknown[];
  label: string;
  empty: string;
  extra?: (station: S) => ComponentChildren;
}) {
  const first = useLoad(() => firstPage(walk), deps);
  // Another first page comes after "Loading…" (useLoad drops the old one): each list starts with its own state.
  return <Loading loaded={first}>{(page) => <PagedList first={page} {...list} />}</Loading>;
}

function PagedList<S extends Station>({
  first,
  label,
  empty,
  extra,
}: {
  first: Page<S>;
  label: string;
  empty: string;
  extra?: (station: S) => ComponentChildren;
}) {
  const [current, setPages] = useState({ items: first.items, next: first.next });
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');
  if (current.items.length === 0) return <p class="muted">{empty}</p>;
  const more = async () => {
    if (!current.next) return;
    setBusy(true);
    setError('');
    try {
      const page = await current.next();
      setPages({ items: [...current.items, ...page.items], next: page.next });
    } catch (failure) {
      setError(messageOf(failure));
    } finally {
      setBusy(false);
    }
  };
  const shown = current.items.length;
  const of = first.total !== undefined ? ` of ${first.total}` : '';
  return (
    <>
      <StationList stations={current.items} label={label} extra={extra} />
      <p class="muted list-status" role="status">
        {`Showing ${shown}${of} station${shown === 1 && !of ? '' : 's'}${current.next ? '.' : ', the end of the list.'}`}
      </p>
      <Alert message={error} />
      {current.next && (
        <button type="button" class="button wide" onClick={more} disabled={busy}>
          {busy ? 'Loading…' : 'Show more'}
        </button>
      )}
    </>
  );
}

/** Links as chips (genres, countries, trending searches). */
export function Chips({
  items,
  label,
}: {
  items: { key: string | number; href: string; text: string }[];
  label: string;
}) {
  return (
    <ul class="chips" aria-label={label}>
      {items.map((item) => (
        <li key={item.key}>
          <a class="chip" href={item.href}>
            {item.text}
          </a>
        </li>
      ))}
    </ul>
  );
}
