// The layers of src/ (docs/architecture.md#layers), checked in CI by `npm run lint:deps`.
// From the bottom: lib/ (helpers that know nothing of the app) < db/ < env.ts and config.ts < http/ (the request's
// D1 batch and write guards) < the features (accounts, rate-limits, crowd, catalogue, activity, playlists, search,
// streams), each with its Durable Object < middleware/ < routes/ < app.ts, index.ts, scheduled.ts. Imports run
// downward (or within a layer) and never in a circle.
const FEATURES = '^src/(accounts|rate-limits|crowd|catalogue|activity|playlists|search|streams)/';
const ABOVE_FEATURES = '^src/(middleware|routes)/|^src/(app|index|scheduled)\\.ts$';

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
      comment: 'db/ (schema, client, query helpers, Durable Object storage) imports only db/ and lib/.',
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
      name: 'http-below-features',
      severity: 'error',
      comment: "http/ (the request's D1 batch, write guards, idempotency keys) knows no feature.",
      from: { path: '^src/http/' },
      to: { path: '^src/', pathNot: '^src/(http/|db/|lib/|env\\.ts$|config\\.ts$)' },
    },
    {
      name: 'features-below-middleware',
      severity: 'error',
      comment: 'Features and their Durable Objects never import middleware, routes or the app.',
      from: { path: FEATURES },
      to: { path: ABOVE_FEATURES },
    },
    {
      name: 'schemas-below-routes',
      severity: 'error',
      comment: 'schemas/ (zod shapes of requests and responses) imports no route, middleware or app module.',
      from: { path: '^src/schemas/' },
      to: { path: ABOVE_FEATURES },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    exclude: { path: '\\.d\\.ts$' },
  },
};
