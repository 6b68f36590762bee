// The layers of src/ (docs/architecture.md#layers), checked in CI by `npm run lint:deps`.
// From the bottom: lib/ (helpers that know nothing of the app) < db/ < env.ts and
// config.ts < the cache classes < the domain modules (accounts, catalogue, activity,
// playlists, search, streams) and their Durable Objects < middleware/ < routes/ < app.ts,
// index.ts. Imports run downward (or within a layer) and never in a circle.
const DOMAIN = '^src/(services|catalogue|activity|playlists|search|streams|durable-objects)/';
const ABOVE_DOMAIN = '^src/(middleware|routes)/|^src/(app|index|scheduled)\\.ts$|^src/cache/index\\.ts$';

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'An import circle: no module of it can be read first.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'lib-is-the-bottom',
      severity: 'error',
      comment: 'lib/ holds helpers that know nothing of the app: it imports only lib/.',
      from: { path: '^src/lib/' },
      to: { path: '^src/', pathNot: '^src/lib/' },
    },
    {
      name: 'db-above-lib-only',
      severity: 'error',
      comment: 'db/ (schema, client, queries helpers) imports only db/ and lib/.',
      from: { path: '^src/db/' },
      to: { path: '^src/', pathNot: '^src/(db|lib)/' },
    },
    {
      name: 'env-and-config-low',
      severity: 'error',
      comment:
        "env.ts and config.ts describe the Worker's bindings and request variables: they import only db/, lib/ and each other.",
      from: { path: '^src/(env|config)\\.ts$' },
      to: { path: '^src/', pathNot: '^src/(db/|lib/|env\\.ts$|config\\.ts$)' },
    },
    {
      name: 'cache-classes-low',
      severity: 'error',
      comment: 'The cache classes know no domain: they import lib/, env.ts, config.ts and each other.',
      from: { path: '^src/cache/(namespace|shared)\\.ts$' },
      to: { path: '^src/', pathNot: '^src/(lib/|env\\.ts$|config\\.ts$|cache/(namespace|shared)\\.ts$)' },
    },
    {
      name: 'domain-below-http',
      severity: 'error',
      comment: "Domain modules and Durable Objects never import middleware, routes, the app or the handlers' caches.",
      from: { path: DOMAIN },
      to: { path: ABOVE_DOMAIN },
    },
    {
      name: 'durable-objects-import-no-domain',
      severity: 'error',
      comment:
        'A Durable Object in durable-objects/ imports only lower layers (a Durable Object may live beside its domain instead).',
      from: { path: '^src/durable-objects/' },
      to: { path: '^src/(services|catalogue|activity|playlists|search|streams)/' },
    },
    {
      name: 'schemas-below-routes',
      severity: 'error',
      comment: 'schemas/ (zod shapes of requests and responses) imports no route, middleware or app module.',
      from: { path: '^src/schemas/' },
      to: { path: ABOVE_DOMAIN },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    exclude: { path: '\\.d\\.ts$' },
  },
};
