import { forgotPassword, resetPassword, revokeOtherSessions } from '@radio-api/client';
import { useState } from 'preact/hooks';
import { api, call, messageOf } from '../api';
import { stop } from '../player';
import { href, navigate, route } from '../router';
import { notice, session, signedIn, signedOut } from '../session';
import { useStore } from '../store';
import { Alert, Field, Notice, Screen, useSubmit } from '../ui/common';

const text = (form: FormData, name: string) => String(form.get(name) ?? '');

/** Once signed in: the screen that asked for it shows itself; from the sign-in and sign-up screens, home. */
function afterSignIn() {
  const { path } = route.get();
  if (path === '/signin' || path === '/signup') navigate('/', undefined, true);
}

/** The first screen of a visitor: what the app does, and the way in. */
export function Welcome() {
  const why = useStore(notice);
  return (
    <Screen title="Radio for every taste">
      <Notice message={why} />
      <p class="lead">Radio stations from around the world, live, in your browser.</p>
      <ul class="features">
        <li>Search by name, genre or country, or find the stations near you.</li>
        <li>See what a station plays right now, and what it played before.</li>
        <li>Keep your favorites, and build playlists to share with anyone.</li>
      </ul>
      <p class="actions">
        <a class="button primary" href={href('/signup')}>
          Create a free account
        </a>
        <a class="button" href={href('/signin')}>
          Sign in
        </a>
      </p>
    </Screen>
  );
}

/** A form's password, with a box that shows it as typed; `chosen`: a new one, 8 to 128 characters. */
function PasswordField({
  label = 'Password',
  chosen = false,
  hint,
  error,
}: {
  label?: string;
  chosen?: boolean;
  hint?: string;
  error: string[] | undefined;
}) {
  const [shown, setShown] = useState(false);
  return (
    <>
      <Field
        label={label}
        name="password"
        type={shown ? 'text' : 'password'}
        autocomplete={chosen ? 'new-password' : 'current-password'}
        required
        minLength={chosen ? 8 : undefined}
        maxLength={chosen ? 128 : undefined}
        hint={hint}
        error={error}
      />
      <label class="check">
        <input type="checkbox" checked={shown} onChange={(e) => setShown(e.currentTarget.checked)} /> Show password
      </label>
    </>
  );
}

/** A form's end: why it failed, said at once, and its button, busy while the form is sent. */
function Submit({
  busy,
  message,
  label,
  busyLabel,
}: {
  busy: boolean;
  message: string;
  label: string;
  busyLabel: string;
}) {
  return (
    <>
      <Alert message={message} />
      <button class="button primary" type="submit" disabled={busy}>
        {busy ? busyLabel : label}
      </button>
    </>
  );
}

export function SignIn() {
  const why = useStore(notice);
  const { submit, busy, message, fields } = useSubmit(async (form) => {
    const { data } = await call(() =>
      api.POST('/api/v1/auth/login', { body: { email: text(form, 'email'), password: text(form, 'password') } }),
    );
    signedIn({ token: data.token, user: data.user });
    afterSignIn();
  });
  return (
    <Screen title="Sign in">
      <Notice message={why} />
      <form class="form" onSubmit={submit}>
        <Field label="Email" name="email" type="email" autocomplete="email" required error={fields.email} />
        <PasswordField error={fields.password} />
        <Submit busy={busy} message={message} label="Sign in" busyLabel="Signing in…" />
      </form>
      <p>
        <a href={href('/forgot')}>Forgot your password?</a>
      </p>
      <p>
        New here? <a href={href('/signup')}>Create an account</a>
      </p>
    </Screen>
  );
}

export function SignUp() {
  const { submit, busy, message, fields } = useSubmit(async (form) => {
    const password = text(form, 'password');
    const { data } = await call(() =>
      api.POST('/api/v1/auth/register', {
        body: { name: text(form, 'name'), email: text(form, 'email'), password, password_confirmation: password },
      }),
    );
    signedIn({ token: data.token, user: data.user });
    afterSignIn();
  });
  return (
    <Screen title="Create your account">
      <form class="form" onSubmit={submit}>
        <Field label="Name" name="name" autocomplete="name" required maxLength={255} error={fields.name} />
        <Field label="Email" name="email" type="email" autocomplete="email" required error={fields.email} />
        <PasswordField chosen hint="At least 8 characters." error={fields.password} />
        <Submit busy={busy} message={message} label="Create account" busyLabel="Creating your account…" />
      </form>
      <p>
        Already have an account? <a href={href('/signin')}>Sign in</a>
      </p>
    </Screen>
  );
}

export function Forgot() {
  const { submit, busy, message, fields } = useSubmit(async (form) => {
    const email = text(form, 'email');
    await call(() => forgotPassword(api, email));
    navigate('/reset', { email, sent: 1 });
  });
  return (
    <Screen title="Reset your password">
      <p>Enter the email of your account: we will mail you a six-digit code to set a new password.</p>
      <form class="form" onSubmit={submit}>
        <Field label="Email" name="email" type="email" autocomplete="email" required error={fields.email} />
        <Submit busy={busy} message={message} label="Send the code" busyLabel="Sending…" />
      </form>
      <p>
        Already have a code? <a href={href('/reset')}>Enter it</a>
      </p>
    </Screen>
  );
}

export function Reset() {
  const { query } = useStore(route);
  const { submit, busy, message, fields } = useSubmit(async (form) => {
    const reset = { email: text(form, 'email'), code: text(form, 'code'), password: text(form, 'password') };
    await call(() => resetPassword(api, reset));
    notice.set('Your password is set. Sign in with it.');
    navigate('/signin', undefined, true);
  });
  return (
    <Screen title="Set a new password">
      {query.get('sent') && (
        <Notice message="If an account has this email, a six-digit code is on its way. It is valid for 30 minutes." />
      )}
      <form class="form" onSubmit={submit}>
        <Field
          label="Email"
          name="email"
          type="email"
          autocomplete="email"
          required
          value={query.get('email') ?? undefined}
          error={fields.email}
        />
        <Field
          label="Code from the email"
          name="code"
          inputMode="numeric"
          autocomplete="one-time-code"
          pattern="[0-9]{6}"
          maxLength={6}
          required
          error={fields.code}
        />
        <PasswordField
          label="New password"
          chosen
          hint="At least 8 characters. Every device signed in to your account is signed out."
          error={fields.password}
        />
        <Submit busy={busy} message={message} label="Set the password" busyLabel="Setting it…" />
      </form>
    </Screen>
  );
}

/** Signs out here: the token is revoked at the API (when it can be reached) and forgotten. */
export async function signOut() {
  stop();
  await call(() => api.POST('/api/v1/auth/logout')).catch(() => undefined);
  signedOut('You are signed out.');
  navigate('/', undefined, true);
}

export function Account() {
  const current = useStore(session);
  const [others, setOthers] = useState('');
  if (!current) return null;
  const { user } = current;
  const signOutOthers = async () => {
    try {
      await call(() => revokeOtherSessions(api));
      setOthers('Your other devices are signed out.');
    } catch (error) {
      setOthers(messageOf(error));
    }
  };
  return (
    <Screen title="Your account">
      <p>
        Signed in as <strong>{user.name}</strong> ({user.email}).
      </p>
      <p class="actions">
        <button type="button" class="button primary" onClick={signOut}>
          Sign out
        </button>
        <button type="button" class="button" onClick={signOutOthers}>
          Sign out on other devices
        </button>
      </p>
      {others && <p role="status">{others}</p>}
      <p>
        To change your password, <a href={href('/forgot')}>ask for a reset code</a>.
      </p>
      <p>
        <a href="/docs">The API reference</a>, for developers.
      </p>
    </Screen>
  );
}
