// One environment of wrangler.toml, read and written as text (the file keeps its comments and layout), for the
// deploy scripts: scripts/cloudflare-provision.mjs writes the ids and the custom domain into it, and
// scripts/rollout.mjs and scripts/deploy.mjs read the domain and the Worker's name back. Why a custom domain and
// not workers.dev: docs/operations.md#custom-domain.

/** `[env.<env>]` up to the next `# ----------` divider line (or the end): its text and where it sits. */
export function envSection(toml, env) {
  const start = toml.indexOf(`[env.${env}]`);
  if (start === -1) throw new Error(`wrangler.toml has no [env.${env}]`);
  const next = toml.slice(start + 1).search(/^# -{10,}/m);
  const end = next === -1 ? toml.length : start + 1 + next;
  return { start, end, text: toml.slice(start, end) };
}

/** `toml` with the section of `env` replaced by `text`. */
export function replaceEnvSection(toml, env, text) {
  const { start, end } = envSection(toml, env);
  return toml.slice(0, start) + text + toml.slice(end);
}

/**
 * The keys of the `[env.X]` table itself: the lines before its first sub-table (`[env.X.vars]`,
 * `[[env.X.d1_databases]]`...), where TOML puts every key written after the header.
 */
function ownKeys(section) {
  const sub = section.slice(1).search(/^\[/m);
  const end = sub === -1 ? section.length : sub + 1;
  return { head: section.slice(0, end), rest: section.slice(end) };
}

/** The value of a string key of the `[env.X]` table itself (`name`), or undefined. */
function ownString(section, key) {
  return new RegExp(`^${key}\\s*=\\s*"([^"]*)"`, 'm').exec(ownKeys(section).head)?.[1];
}

/** The Worker's name in this environment (`name = "radio-api-production"`). */
export function workerNameOf(section) {
  const name = ownString(section, 'name');
  if (!name) throw new Error('the environment has no name = "..." in wrangler.toml');
  return name;
}

/** The `routes = [...]` key of the table, on one line or several (no route holds a `]`). */
const ROUTES = /^routes\s*=\s*\[([^\]]*)\][ \t]*\n?/m;

/**
 * The custom domain this environment serves from (`routes = [{ pattern = "api.example.com", custom_domain = true }]`),
 * or null when it has none: then it would serve from workers.dev, which the deploy scripts refuse.
 */
export function customDomainOf(section) {
  const routes = ROUTES.exec(ownKeys(section).head)?.[1] ?? '';
  for (const [, route] of routes.matchAll(/\{([^}]*)\}/g)) {
    const pattern = /\bpattern\s*=\s*"([^"]+)"/.exec(route)?.[1];
    if (pattern && /\bcustom_domain\s*=\s*true\b/.test(route)) return pattern;
  }
  return null;
}

/**
 * The section with its own `workers_dev` and `routes` keys replaced by `workers_dev = false` and one custom domain
 * route, placed after `name = ...`. Applying it again with the same domain changes nothing.
 */
export function withCustomDomain(section, domain) {
  const { head, rest } = ownKeys(section);
  const lines = head
    .replace(ROUTES, '')
    .split('\n')
    .filter((line) => !/^workers_dev\s*=/.test(line));
  const at = lines.findIndex((line) => /^name\s*=/.test(line));
  const route = [`workers_dev = false`, `routes = [{ pattern = "${domain}", custom_domain = true }]`];
  lines.splice(at === -1 ? 1 : at + 1, 0, ...route);
  return lines.join('\n') + rest;
}

/** The variable that names an environment's domain: STAGING_DOMAIN, PRODUCTION_DOMAIN. */
export const domainVariable = (env) => `${env.toUpperCase().replaceAll('-', '_')}_DOMAIN`;

/**
 * The custom domain of `env` from its variable (`vars`: process.env), checked: a host name of a zone on the account,
 * as `routes` takes it for a custom domain (no scheme, path, port or wildcard). Throws with what to set and why.
 */
export function domainFromVariables(env, vars) {
  const name = domainVariable(env);
  const value = (vars[name] ?? '').trim();
  if (value === '') {
    throw new Error(
      `${name} is not set: ${env} must serve from a custom domain, not workers.dev, where the Cache API does ` +
        `nothing (docs/operations.md#custom-domain). Set the repository variable ${name} (CI) or the environment ` +
        `variable (by hand) to a host name of a zone on the account, such as api.example.com.`,
    );
  }
  const host = /^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
  if (!host.test(value)) {
    throw new Error(
      `${name} is ${JSON.stringify(value)}: it must be a host name only, in lower case, such as api.example.com ` +
        '(no https://, path, port or wildcard: a custom domain takes every path of one host).',
    );
  }
  return value;
}
