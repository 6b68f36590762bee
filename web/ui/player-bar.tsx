import { useEffect } from 'preact/hooks';
import { titleText, useLive } from '../live';
import { player, resume } from '../player';
import { href } from '../router';
import { useStore } from '../store';
import { Icon } from './icons';
import { Logo, PlayButton } from './stations';

const statusWords = {
  idle: '',
  loading: 'Connecting…',
  playing: '',
  paused: 'Paused',
  failed: 'Cannot play',
  ended: 'Stopped',
} as const;

/** The player, fixed at the bottom of every screen while a station is chosen: what plays, and play/pause. */
export function PlayerBar() {
  const state = useStore(player);
  const { station } = state;
  const live = useLive(station?.id);
  const title = titleText(live?.title);
  useEffect(() => {
    if (!station || !('mediaSession' in navigator)) return;
    navigator.mediaSession.metadata = new MediaMetadata({
      title: title || station.name,
      artist: title ? station.name : '',
      artwork: [{ src: station.logo }],
    });
  }, [station?.id, title]);
  if (!station) return null;
  const line = state.message || statusWords[state.status] || title || station.country.name;
  return (
    <section class="player" aria-label="Player">
      <Logo station={station} size={44} />
      <div class="player-text">
        <a class="station-name" href={href(`/station/${station.id}`)}>
          {station.name}
        </a>
        <span class="player-line" id="player-line">
          {line}
        </span>
      </div>
      {state.status === 'failed' || state.status === 'ended' ? (
        <button type="button" class="play" aria-label={`Try ${station.name} again`} onClick={resume}>
          <Icon name="play" />
        </button>
      ) : (
        <PlayButton station={station} />
      )}
      <p class="sr-only" role="status">
        {state.message}
      </p>
    </section>
  );
}
