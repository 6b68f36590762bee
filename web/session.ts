// Who is signed in. The token is kept in localStorage, so an installed app stays signed in across restarts, as a
// phone app does (docs/listener-page.md#the-token): readable by this origin's scripts only, and this origin runs no
// script but its own (script-src 'self', no inline script). Signing out revokes it at the API and forgets it here.
import type { User } from '@radio-api/client';
import { createStore } from './store';

export interface Session {
  token: string;
  user: User;
}

const KEY = 'radio.session';

function saved(): Session | null {
  try {
    const value = JSON.parse(localStorage.getItem(KEY) ?? 'null') as Session | null;
    return value && typeof value.token === 'string' ? value : null;
  } catch {
    return null;
  }
}

export const session = createStore<Session | null>(saved());

/** A line the sign-in screen shows once: why the session ended, or what to do next. */
export const notice = createStore<string>('');

export function signedIn(next: Session) {
  localStorage.setItem(KEY, JSON.stringify(next));
  notice.set('');
  session.set(next);
}

/** Forgets the session; `why` is shown on the sign-in screen (an expired token, a closed account). */
export function signedOut(why = '') {
  if (!session.get()) return;
  localStorage.removeItem(KEY);
  notice.set(why);
  session.set(null);
}

// Another tab signed in or out.
addEventListener('storage', (event) => {
  if (event.key === KEY) session.set(saved());
});
