import { desc, lte, sql } from 'drizzle-orm';
import { config } from '../config';
import type { Db } from '../db/client';
import { mailOutbox } from '../db/schema';
import type { Bindings } from '../env';
import { DependencyError } from '../lib/dependencies';
import { isoTimestamp } from '../lib/time';

/** A message to one person: a text part and an HTML part, nothing fetched by the reader (no tracking pixels). */
export interface Mail {
  to: string;
  subject: string;
  text: string;
  html: string;
}

/** Sends mail through the provider the configuration names (docs/operations.md#mail). */
export interface Mailer {
  send(mail: Mail): Promise<void>;
}

/** Messages the development outbox keeps; `GET /admin/outbox` shows the last 50. */
const OUTBOX_KEEPS = 200;

const RESEND_URL = 'https://api.resend.com/emails';

/** Cloudflare's Email Service: the `send_email` binding `EMAIL`, from an address of a domain onboarded to it. */
function cloudflareMailer(env: Bindings, from: string): Mailer {
  return {
    async send(mail) {
      if (!env.EMAIL) throw new DependencyError('Email', { cause: new Error('no EMAIL binding') });
      await env.EMAIL.send({ from, to: mail.to, subject: mail.subject, text: mail.text, html: mail.html });
    },
  };
}

/** An HTTP provider (Resend): its API key a secret, `from` on a domain verified there. */
function resendMailer(apiKey: string, from: string): Mailer {
  return {
    async send(mail) {
      const response = await fetch(RESEND_URL, {
        method: 'POST',
        headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ from, to: [mail.to], subject: mail.subject, text: mail.text, html: mail.html }),
      });
      if (!response.ok) {
        const detail = (await response.text()).slice(0, 200);
        throw new DependencyError('Resend', { cause: new Error(`${response.status} ${detail}`) });
      }
    },
  };
}

/** Development without a provider: the message is kept in D1 for `GET /admin/outbox` and told in the log. */
function outboxMailer(db: Db, logLevel: string): Mailer {
  return {
    async send(mail) {
      await db.batch([
        db.insert(mailOutbox).values({ ...mail, sentAt: isoTimestamp() }),
        db
          .delete(mailOutbox)
          .where(lte(mailOutbox.id, sql`(SELECT max(${mailOutbox.id}) FROM ${mailOutbox}) - ${OUTBOX_KEEPS}`)),
      ]);
      if (logLevel !== 'silent') console.log(`mail to ${mail.to}: ${mail.subject}\n${mail.text}`);
    },
  };
}

/** The mailer of `MAIL_PROVIDER`: `cloudflare`, `resend`, or the development `outbox`. */
export function mailerFor(env: Bindings, db: Db): Mailer {
  const { mail, logLevel } = config(env);
  if (mail.provider === 'cloudflare') return cloudflareMailer(env, mail.from);
  if (mail.provider === 'resend') return resendMailer(mail.resendApiKey ?? '', mail.from);
  return outboxMailer(db, logLevel);
}

/** The development outbox's last `limit` messages, newest first. */
export const outboxMessages = (db: Db, limit: number) =>
  db
    .select({ to: mailOutbox.to, subject: mailOutbox.subject, text: mailOutbox.text, sent_at: mailOutbox.sentAt })
    .from(mailOutbox)
    .orderBy(desc(mailOutbox.id))
    .limit(limit);
