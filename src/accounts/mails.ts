import type { Mail } from '../mail/mailer';
import { CODE_TTL_MS } from './codes';

const minutes = CODE_TTL_MS / 60_000;

/** Text to HTML, escaped: the code is the only thing a mail carries from the service. */
const escape = (text: string) => text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);

/** A plain mail of a few paragraphs, in text and HTML; no image, no link to follow, nothing fetched when read. */
function plainMail(to: string, subject: string, paragraphs: string[], code: string): Mail {
  const text = [...paragraphs.slice(0, 1), `    ${code}`, ...paragraphs.slice(1)].join('\n\n');
  const html = [
    `<p>${escape(paragraphs[0]!)}</p>`,
    `<p style="font-size:24px;letter-spacing:4px;font-family:monospace">${escape(code)}</p>`,
    ...paragraphs.slice(1).map((paragraph) => `<p>${escape(paragraph)}</p>`),
  ].join('\n');
  return { to, subject, text, html };
}

/** The password reset code (docs/api.md#password-reset). */
export const resetMail = (to: string, code: string) =>
  plainMail(
    to,
    'Your password reset code',
    [
      'Someone asked to reset the password of your Radio API account. Enter this code in the app to choose a new one:',
      `It works once, for ${minutes} minutes. If it was not you, do nothing: your password stays as it is.`,
    ],
    code,
  );

/** The email verification code (docs/api.md#email-verification). */
export const verifyMail = (to: string, code: string) =>
  plainMail(
    to,
    'Confirm your email address',
    [
      'Enter this code in the app to confirm that this is your email address:',
      `It works once, for ${minutes} minutes. If you did not sign up or change your email, do nothing.`,
    ],
    code,
  );
