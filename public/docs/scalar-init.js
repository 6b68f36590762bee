// The interactive reference of /api/v1/openapi.json, working offline: every option below
// keeps Scalar from reaching a host other than this one (fonts, its proxy, its AI agent,
// its client and registry), which the page's CSP would block anyway.
/* global Scalar */
Scalar.createApiReference('#app', {
  url: '/api/v1/openapi.json',
  withDefaultFonts: false,
  hideClientButton: true,
  showDeveloperTools: 'never',
  agent: { disabled: true },
  telemetry: false,
  documentDownloadType: 'json',
  authentication: { preferredSecurityScheme: 'bearerAuth' },
});
