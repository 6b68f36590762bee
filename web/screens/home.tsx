import type { ComponentChildren } from 'preact';
import { api, call } from '../api';
import { href } from '../router';
import { session } from '../session';
import { useStore } from '../store';
import { Loading, Screen, useLoad } from '../ui/common';
import { StationList } from '../ui/stations';

function Shelf({ title, more, children }: { title: string; more?: string; children: ComponentChildren }) {
  const id = `shelf-${title.toLowerCase().replace(/\W+/g, '-')}`;
  return (
    <section class="shelf" aria-labelledby={id}>
      <div class="shelf-head">
        <h2 id={id}>{title}</h2>
        {more && (
          <a href={more}>
            See all<span class="sr-only"> {title.toLowerCase()}</span>
          </a>
        )}
      </div>
      {children}
    </section>
  );
}

export function Home() {
  const user = useStore(session)?.user;
  const recent = useLoad(
    () => call(() => api.GET('/api/v1/me/radios/recent', { params: { query: { limit: 3 } } })),
    [],
  );
  const recommended = useLoad(
    () => call(() => api.GET('/api/v1/me/radios/recommended', { params: { query: { limit: 6 } } })),
    [],
  );
  const trending = useLoad(
    () => call(() => api.GET('/api/v1/radios/trending', { params: { query: { limit: 5 } } })),
    [],
  );
  const discover = useLoad(
    () => call(() => api.GET('/api/v1/me/radios/discover', { params: { query: { limit: 6 } } })),
    [],
  );
  return (
    <Screen title={user ? `Hello, ${user.name}` : 'Home'}>
      {recent.data && recent.data.data.length > 0 && (
        <Shelf title="Listen again" more={href('/library', { tab: 'recent' })}>
          <StationList stations={recent.data.data} label="Listen again" />
        </Shelf>
      )}
      <Shelf title="Recommended for you">
        <Loading loaded={recommended}>
          {({ data }) => <StationList stations={data} label="Recommended for you" />}
        </Loading>
      </Shelf>
      <Shelf title="Trending now" more={href('/trending')}>
        <Loading loaded={trending}>
          {({ data }) =>
            data.length ? (
              <StationList stations={data} label="Trending now" />
            ) : (
              <p class="muted">Nothing is trending yet: be the first to play something.</p>
            )
          }
        </Loading>
      </Shelf>
      <Shelf title="Discover">
        <Loading loaded={discover}>{({ data }) => <StationList stations={data} label="Discover" />}</Loading>
      </Shelf>
    </Screen>
  );
}
