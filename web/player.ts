// The player: one <audio> for the whole app, so it keeps playing while the listener browses. It walks the station's
// streams best first (RadioResource.streams, contract section 11; a station without the list has its one
// `stream_url`): when a stream fails to start, it reports it (POST /radios/{id}/report) and tries the next one. A
// stream that starts is a play (POST /radios/{id}/play: counted once a minute per user and channel by the API, so a
// resume or a retry counts no extra) and a good report, once per station while the app is open.
import { api, call, type Station } from './api';
import { createStore } from './store';

/** One stream of a station, as RadioResource.streams lists it. */
export interface StreamChoice {
  url: string;
  format?: string;
  bitrate?: number | null;
}

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

/** The streams to try, best first: `streams` when the API lists them, else the station's `stream_url`. */
export function streamsOf(station: Station): { streams: StreamChoice[]; listed: boolean } {
  const listed = (station as Station & { streams?: StreamChoice[] }).streams;
  return Array.isArray(listed) && listed.length > 0
    ? { streams: listed, listed: true }
    : { streams: [{ url: station.stream_url }], listed: false };
}

/**
 * The body of a stream report. `stream_url` names the stream that failed when the station lists its streams (the
 * report's schema, StreamReport, takes one of them: contract section 11); an answer without the list is reported
 * without it, about the channel's `stream_url`.
 */
export function reportBody(ok: boolean, error: string | undefined, stream: StreamChoice, listed: boolean) {
  return {
    ok,
    ...(error ? { error: error.slice(0, 200) } : {}),
    ...(listed ? { stream_url: stream.url } : {}),
  };
}

const audio = new Audio();
audio.preload = 'none';

interface Tuning {
  station: Station;
  streams: StreamChoice[];
  listed: boolean;
  index: number;
  played: boolean;
}
let tuning: Tuning | null = null;
let startTimer: ReturnType<typeof setTimeout> | undefined;
const reportedGood = new Set<number>();

const set = (patch: Partial<PlayerState>) => player.set({ ...player.get(), ...patch });

function report(station: Station, body: ReturnType<typeof reportBody>) {
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
  if (stream) report(t.station, reportBody(false, error, stream, t.listed));
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
    if (stream) report(t.station, reportBody(true, undefined, stream, t.listed));
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
  const { streams, listed } = streamsOf(station);
  tuning = { station, streams, listed, index: 0, played: false };
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
