import type { ComponentChildren } from 'preact';
import { href, match, route } from './router';
import { session } from './session';
import { createStore, online, useStore } from './store';
import { Screen } from './ui/common';
import { Icon, type IconName } from './ui/icons';
import { PlayerBar } from './ui/player-bar';
import { Account, Forgot, Reset, SignIn, SignUp, Welcome } from './screens/auth';
import { Browse, Charts, CountryScreen, GenreScreen, Nearby, Trending } from './screens/browse';
import { Home } from './screens/home';
import { Library, PlaylistScreen } from './screens/library';
import { Search, StationsMatching } from './screens/search';
import { StationScreen } from './screens/station';
import { player } from './player';

/** True once a new version of the app took over this page (the service worker): a reload shows it. */
export const updated = createStore(false);

const tabs: [string, string, IconName][] = [
  ['/', 'Home', 'home'],
  ['/search', 'Search', 'search'],
  ['/browse', 'Browse', 'browse'],
  ['/library', 'Library', 'library'],
];

/** The screens open to visitors; every other one asks to sign in first. */
const open = new Set(['/signin', '/signup', '/forgot', '/reset']);

function screenFor(path: string): ComponentChildren {
  let params: Record<string, string> | null;
  if (path === '/') return <Home />;
  if (path === '/search') return <Search />;
  if (path === '/stations') return <StationsMatching />;
  if (path === '/browse') return <Browse />;
  if (path === '/charts') return <Charts />;
  if (path === '/trending') return <Trending />;
  if (path === '/nearby') return <Nearby />;
  if (path === '/library') return <Library />;
  if (path === '/account') return <Account />;
  if ((params = match('/station/:id', path))) return <StationScreen key={params.id} id={Number(params.id)} />;
  if ((params = match('/genre/:id', path))) return <GenreScreen key={params.id} id={Number(params.id)} />;
  if ((params = match('/country/:code', path))) return <CountryScreen key={params.code} code={params.code ?? ''} />;
  if ((params = match('/playlist/:id', path))) return <PlaylistScreen key={params.id} id={Number(params.id)} />;
  return (
    <Screen title="Nothing here">
      <p>
        This page does not exist. <a href={href('/')}>Go home</a>
      </p>
    </Screen>
  );
}

function Routed() {
  const { path } = useStore(route);
  const signedIn = Boolean(useStore(session));
  if (path === '/signin') return <SignIn />;
  if (path === '/signup') return <SignUp />;
  if (path === '/forgot') return <Forgot />;
  if (path === '/reset') return <Reset />;
  if (!signedIn) return path === '/' ? <Welcome /> : <SignIn />;
  return <>{screenFor(path)}</>;
}

function Banners() {
  const isOnline = useStore(online);
  const isUpdated = useStore(updated);
  return (
    <>
      <div class="banner offline" role="status">
        {!isOnline && 'You are offline. Stations, titles and your lists come back when the connection does.'}
      </div>
      {isUpdated && (
        <div class="banner" role="status">
          A new version of the app is ready.{' '}
          <button type="button" class="link-button" onClick={() => location.reload()}>
            Reload
          </button>
        </div>
      )}
    </>
  );
}

export function App() {
  const { path } = useStore(route);
  const current = useStore(session);
  const playing = Boolean(useStore(player).station);
  const section = tabs.filter(([to]) => to !== '/' && path.startsWith(to)).at(0)?.[0] ?? (path === '/' ? '/' : '');
  return (
    <div class={playing ? 'app with-player' : 'app'}>
      <a class="skip" href="#main" onClick={(e) => (e.preventDefault(), document.getElementById('main')?.focus())}>
        Skip to content
      </a>
      <header class="top">
        <a class="brand" href={href('/')}>
          <img src="/icons/icon.svg" alt="" width="28" height="28" />
          <span>Radio</span>
        </a>
        {current ? (
          <a class="account-link" href={href('/account')} aria-current={path === '/account' ? 'page' : undefined}>
            <Icon name="user" />
            <span>
              <span class="sr-only">Signed in as </span>
              {current.user.name}
            </span>
          </a>
        ) : (
          !open.has(path) && (
            <a class="account-link" href={href('/signin')}>
              Sign in
            </a>
          )
        )}
      </header>
      <Banners />
      {current && (
        <nav class="tabbar" aria-label="Main">
          <ul>
            {tabs.map(([to, label, icon]) => (
              <li key={to}>
                <a href={href(to)} aria-current={section === to ? 'page' : undefined}>
                  <Icon name={icon} />
                  <span>{label}</span>
                </a>
              </li>
            ))}
          </ul>
        </nav>
      )}
      <main id="main" tabIndex={-1}>
        <Routed />
      </main>
      {current && <PlayerBar />}
    </div>
  );
}
