// The player: one <audio> for the whole app, so it keeps playing while the listener browses. It walks the station's
// streams best first (RadioResource.streams, contract section 11): when a stream fails to start, it reports it
// (POST /radios/{id}/report) and tries the next one. A stream that starts is a play (POST /radios/{id}/play: counted
// once a minute per user and channel by the API, so a resume or a retry counts no extra) and a good report, once per
// station while the app is open.
import type { Stream } from '@radio-api/client';
import { api, call, type Station } from './api';
import { createStore } from './store';

export interface PlayerState {
  station: Station | null;
  /** `failed`: no stream of the station started; `ended`: the station stopped sending. */
  status: 'idle' | 'loading' | 'playing' | 'paused' | 'failed' | 'ended';
  /** What the listener is told beside the status (a stream that failed, buffering). */
  message: string;
}

export const player = createStore<PlayerState>({ station: null, status: 'idle', message: '' });

/** The most a stream may take to start before the next one is tried. */
const START_TIMEOUT_MS = 15_000;

const audio = new Audio();
audio.preload = 'none';

interface Tuning {
  station: Station;
  /** The station's streams when play was pressed: a refreshed station (a like) does not reorder a walk under way. */
  streams: Stream[];
  index: number;
  played: boolean;
}
let tuning: Tuning | null = null;
let startTimer: ReturnType<typeof setTimeout> | undefined;
const reportedGood = new Set<number>();

const set = (patch: Partial<PlayerState>) => player.set({ ...player.get(), ...patch });

/** Tells the API whether `stream` started (`error`: why it did not), naming it by its `stream_url`. */
function report(station: Station, stream: Stream, error?: string) {
  const body = {
    ok: error === undefined,
    stream_url: stream.url,
    ...(error === undefined ? {} : { error: error.slice(0, 200) }),
  };
  call(() => api.POST('/api/v1/radios/{id}/report', { params: { path: { id: station.id } }, body })).catch(
    () => undefined,
  );
}

function start(t: Tuning) {
  // Every signal of this attempt names its stream: a late one of an earlier stream must not fail the next.
  const index = t.index;
  const stream = t.streams[index];
  if (!stream) return;
  clearTimeout(startTimer);
  startTimer = setTimeout(() => failed(t, index, 'The stream did not start within 15 seconds.'), START_TIMEOUT_MS);
  audio.src = stream.url;
  audio.play().catch((error: Error) => {
    if (tuning !== t || t.index !== index) return;
    // The browser wants a tap first (autoplay rules): the listener presses play.
    if (error.name === 'NotAllowedError') {
      clearTimeout(startTimer);
      set({ status: 'paused', message: 'Press play to listen.' });
    } else if (error.name !== 'AbortError') failed(t, index, error.message || error.name);
  });
}

/** Stream `index` of `t` did not play: report it, then the next stream, or give up. Each failure counts once. */
function failed(t: Tuning, index: number, error: string) {
  if (tuning !== t || t.index !== index) return;
  clearTimeout(startTimer);
  const stream = t.streams[index];
  if (stream) report(t.station, stream, error);
  if (index + 1 < t.streams.length) {
    t.index = index + 1;
    set({ status: 'loading', message: `Stream ${index + 1} of ${t.streams.length} failed; trying the next one.` });
    start(t);
    return;
  }
  // Past the last stream: a late second signal of the same failure (the error event and play()'s rejection) is ignored.
  t.index = t.streams.length;
  audio.removeAttribute('src');
  audio.load();
  set({ status: 'failed', message: 'This station cannot be played right now. Try again later, or another station.' });
}

const mediaErrors: Record<number, string> = {
  1: 'playback aborted',
  2: 'network error',
  3: 'the stream could not be decoded',
  4: 'the stream format is not supported',
};

audio.addEventListener('playing', () => {
  const t = tuning;
  if (!t) return;
  clearTimeout(startTimer);
  set({ status: 'playing', message: '' });
  if (t.played) return;
  t.played = true;
  call(() => api.POST('/api/v1/radios/{id}/play', { params: { path: { id: t.station.id } } })).catch(() => undefined);
  if (!reportedGood.has(t.station.id)) {
    reportedGood.add(t.station.id);
    const stream = t.streams[t.index];
    if (stream) report(t.station, stream);
  }
});
audio.addEventListener('error', () => {
  const t = tuning;
  if (t && audio.getAttribute('src')) failed(t, t.index, mediaErrors[audio.error?.code ?? 0] ?? 'the stream failed');
});
audio.addEventListener('waiting', () => {
  if (player.get().status === 'playing') set({ message: 'Buffering…' });
});
audio.addEventListener('ended', () => {
  if (tuning) set({ status: 'ended', message: 'The station stopped sending. Press play to listen again.' });
});

/** Plays `station` from its best stream (or resumes it when it is the one paused). */
export function play(station: Station) {
  if (tuning?.station.id === station.id && player.get().status === 'paused') return resume();
  tuning = { station, streams: station.streams, index: 0, played: false };
  player.set({ station, status: 'loading', message: '' });
  start(tuning);
}

export function pause() {
  clearTimeout(startTimer);
  audio.pause();
  set({ status: 'paused', message: '' });
}

/** Plays again from the live edge: the stream is opened anew rather than resumed from what was buffered. */
export function resume() {
  if (!tuning) return;
  if (player.get().status === 'failed') tuning.index = 0;
  set({ status: 'loading', message: '' });
  start(tuning);
}

/** Stops and forgets the station (signing out). */
export function stop() {
  clearTimeout(startTimer);
  tuning = null;
  audio.pause();
  audio.removeAttribute('src');
  audio.load();
  player.set({ station: null, status: 'idle', message: '' });
}

/** Keeps the station shown in the player current (a like, a favorite) without touching the stream. */
export function refreshStation(station: Station) {
  if (tuning?.station.id !== station.id) return;
  tuning.station = station;
  set({ station });
}

// Lock-screen and headset controls.
if ('mediaSession' in navigator) {
  navigator.mediaSession.setActionHandler('play', () => resume());
  navigator.mediaSession.setActionHandler('pause', () => pause());
  navigator.mediaSession.setActionHandler('stop', () => stop());
}
