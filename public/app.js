// The listener page (docs/listener-page.md): the API's own proof that an app can be built on it.
// Plain DOM and fetch, no dependency; the token lives in sessionStorage for this tab only.
'use strict';

const $ = (id) => document.getElementById(id);
let token = sessionStorage.getItem('token');
let events = null;
let current = null;

/** A call of the API; throws the error envelope's message. */
async function api(method, path, body) {
  const headers = { Accept: 'application/json' };
  if (token) headers.Authorization = `Bearer ${token}`;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const response = await fetch(`/api/v1${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = await response.json().catch(() => null);
  if (!response.ok) throw new Error(json?.message ?? `The API answered ${response.status}.`);
  return json;
}

function show() {
  $('sign-in').hidden = Boolean(token);
  $('find').hidden = !token;
  $('account').textContent = token ? 'Signed in.' : '';
}

$('sign-in-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const form = new FormData(event.target);
  const email = String(form.get('email'));
  const password = String(form.get('password'));
  const register = event.submitter?.value === 'register';
  try {
    const { data } = register
      ? await api('POST', '/auth/register', {
          name: email.split('@')[0] || 'Listener',
          email,
          password,
          password_confirmation: password,
        })
      : await api('POST', '/auth/login', { email, password });
    token = data.token;
    sessionStorage.setItem('token', token);
    show();
    $('search-form').elements.q.focus();
  } catch (error) {
    $('account').textContent = error.message;
  }
});

function listStations(stations, empty) {
  const list = $('stations');
  list.replaceChildren();
  $('find-status').textContent = stations.length
    ? `${stations.length} station${stations.length === 1 ? '' : 's'}.`
    : empty;
  for (const station of stations) {
    const item = document.createElement('li');
    const name = document.createElement('span');
    name.textContent = station.country?.name ? `${station.name} (${station.country.name})` : station.name;
    const play = document.createElement('button');
    play.type = 'button';
    play.textContent = 'Play';
    play.setAttribute('aria-label', `Play ${station.name}`);
    play.addEventListener('click', () => tuneIn(station));
    item.append(name, play);
    list.append(item);
  }
}

$('search-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const q = new FormData(event.target).get('q');
  try {
    const { data } = await api('GET', `/radios?per_page=20&search=${encodeURIComponent(String(q))}`);
    listStations(data, 'No station found.');
  } catch (error) {
    $('find-status').textContent = error.message;
  }
});

$('nearby').addEventListener('click', () => {
  if (!navigator.geolocation) {
    $('find-status').textContent = 'This browser cannot tell where you are.';
    return;
  }
  $('find-status').textContent = 'Finding where you are…';
  navigator.geolocation.getCurrentPosition(
    async ({ coords }) => {
      try {
        const { data } = await api('GET', `/radios/nearby?lat=${coords.latitude}&lng=${coords.longitude}`);
        listStations(data, 'No station near you.');
      } catch (error) {
        $('find-status').textContent = error.message;
      }
    },
    () => ($('find-status').textContent = 'Your location is not available: search instead.'),
  );
});

function showTitle(title) {
  $('now-playing').textContent = title.stream_title ?? 'no title sent by this station';
}

let historyTimer = null;

/** The station's recent songs, read once a burst of titles has passed (a reconnect replays the ones it missed). */
function refreshHistory(id) {
  clearTimeout(historyTimer);
  historyTimer = setTimeout(() => showHistory(id).catch(() => undefined), 500);
}

async function showHistory(id) {
  const { data } = await api('GET', `/radios/${id}/history?limit=10`);
  // Another station may have been chosen meanwhile.
  if (current?.id !== id) return;
  $('history').replaceChildren(
    ...data.map((entry) => {
      const item = document.createElement('li');
      item.textContent = entry.stream_title;
      return item;
    }),
  );
}

function tuneIn(station) {
  current = station;
  $('player').hidden = false;
  $('station-name').textContent = station.name;
  $('like').setAttribute('aria-pressed', String(Boolean(station.is_liked)));
  $('favorite').setAttribute('aria-pressed', String(Boolean(station.is_favorited)));
  const audio = $('audio');
  audio.src = station.stream_url;
  audio.play().catch(() => ($('now-playing').textContent = 'press play to listen'));
  events?.close();
  // The API pushes each new title (Server-Sent Events); EventSource reconnects by itself.
  events = new EventSource(`/api/v1/radios/${station.id}/now-playing/events`);
  events.addEventListener('now-playing', (event) => {
    showTitle(JSON.parse(event.data));
    refreshHistory(station.id);
  });
  events.addEventListener('error', () => {
    // EventSource retries by itself; closed means the API refused (a missing station, too many open streams).
    if (events.readyState === EventSource.CLOSED) $('now-playing').textContent = 'live titles are not available now';
  });
}

$('like').addEventListener('click', async () => {
  if (!current) return;
  const { data } = await api('POST', `/radios/${current.id}/like`);
  $('like').setAttribute('aria-pressed', String(data.is_liked));
});

$('favorite').addEventListener('click', async () => {
  if (!current) return;
  const { data } = await api('POST', '/favorites/toggle', { radio_channel_id: current.id });
  $('favorite').setAttribute('aria-pressed', String(data.is_favorited));
});

show();
