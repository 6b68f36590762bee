import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, messageOf } from '../api';
import { online, useStore } from '../store';

/** "1 station", "2 stations": the count and its word, in English as every line of the app. */
export const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

let navigated = false;
addEventListener('hashchange', () => (navigated = true));

/**
 * A screen: its heading names it (and the tab's title). After a navigation the heading takes the focus, so a screen
 * reader says where the listener is and Tab goes on from the top of the new screen.
 */
export function Screen({ title, children, wide }: { title: string; children: ComponentChildren; wide?: boolean }) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    document.title = `${title} · Radio`;
  }, [title]);
  useEffect(() => {
    if (!navigated) return;
    navigated = false;
    scrollTo(0, 0);
    heading.current?.focus({ preventScroll: true });
  }, []);
  return (
    <section class={wide ? 'screen wide' : 'screen'} aria-labelledby="screen-title">
      <h1 id="screen-title" tabIndex={-1} ref={heading}>
        {title}
      </h1>
      {children}
    </section>
  );
}

export interface Loaded<T> {
  data?: T | undefined;
  error: string;
  reload: () => void;
}

/**
 * What `load` answers, loaded again when `deps` change, when `refresh` changes (keeping what is shown until the new
 * answer), and when the network comes back after a failure.
 */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[], refresh?: unknown): Loaded<T> {
  const isOnline = useStore(online);
  const [state, setState] = useState<{ data?: T; error: string; key?: string }>({ error: '' });
  const [tick, setTick] = useState(0);
  // A reload keeps what is shown until the new answer; other deps (another station) do not.
  const key = JSON.stringify(deps);
  useEffect(() => {
    let live = true;
    setState((s) => ({ data: s.key === key ? s.data : undefined, error: '', key }));
    load().then(
      (data) => live && setState({ data, error: '', key }),
      (error: unknown) => live && setState({ error: messageOf(error), key }),
    );
    return () => {
      live = false;
    };
    // The deps are the caller's, as with useEffect.
  }, [...deps, tick, refresh]);
  const failed = Boolean(state.error);
  useEffect(() => {
    if (isOnline && failed) setTick((t) => t + 1);
  }, [isOnline]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { ...state, reload };
}

/** A failure, said at once to screen readers. */
export function Alert({ message }: { message: string }) {
  return message ? (
    <p class="alert" role="alert">
      {message}
    </p>
  ) : null;
}

/** A line to read (why the session ended, what happens next), said to screen readers when they are free. */
export function Notice({ message }: { message: string }) {
  return message ? (
    <p class="notice" role="status">
      {message}
    </p>
  ) : null;
}

/** The usual outcome of a load: a line while it loads, the failure with a retry, else the content. */
export function Loading<T>({ loaded, children }: { loaded: Loaded<T>; children: (data: T) => ComponentChildren }) {
  const isOnline = useStore(online);
  if (loaded.data !== undefined && !loaded.error) return <>{children(loaded.data)}</>;
  if (loaded.error)
    return (
      <div class="problem">
        <p role="alert">{loaded.error}</p>
        {isOnline && (
          <button type="button" class="button" onClick={loaded.reload}>
            Try again
          </button>
        )}
      </div>
    );
  return (
    <p class="muted" role="status">
      Loading…
    </p>
  );
}

/** A labelled input with its own error message (from a 422's `data.errors`). */
export function Field({
  label,
  name,
  error,
  hint,
  type = 'text',
  ...input
}: {
  label: string;
  name: string;
  error?: string[] | undefined;
  hint?: string;
  type?: 'text' | 'email' | 'password';
  autocomplete?: string;
  required?: boolean;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  inputMode?: 'numeric' | 'text' | 'email';
  value?: string | undefined;
}) {
  const id = `field-${name}`;
  const described = [hint ? `${id}-hint` : '', error?.length ? `${id}-error` : ''].filter(Boolean).join(' ');
  const attributes = {
    id,
    name,
    'aria-invalid': error?.length ? ('true' as const) : undefined,
    'aria-describedby': described || undefined,
    ...input,
  };
  return (
    <div class="field">
      <label for={id}>{label}</label>
      {/* One element per type: Preact types each input type's attributes apart. */}
      {type === 'password' ? (
        <input type="password" {...attributes} />
      ) : type === 'email' ? (
        <input type="email" {...attributes} />
      ) : (
        <input type="text" {...attributes} />
      )}
      {hint && (
        <p class="hint" id={`${id}-hint`}>
          {hint}
        </p>
      )}
      {error?.length ? (
        <p class="field-error" id={`${id}-error`}>
          {error.join(' ')}
        </p>
      ) : null}
    </div>
  );
}

/** The fields' errors of a 422, by field name. */
const fieldErrors = (error: unknown): Record<string, string[]> => (error instanceof ApiError ? error.fields : {});

/** A form's submit: runs `action`, keeps the button busy meanwhile, answers the failure's message. */
export function useSubmit<T>(action: (form: FormData) => Promise<T>) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const submit = async (event: Event) => {
    event.preventDefault();
    if (busy) return;
    setBusy(true);
    setError(null);
    try {
      await action(new FormData(event.currentTarget as HTMLFormElement));
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };
  return { submit, busy, error, message: error ? messageOf(error) : '', fields: fieldErrors(error) };
}
