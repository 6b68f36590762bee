import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      'node_modules',
      '.wrangler',
      'dist',
      'clients/typescript/dist',
      'bench/out',
      'drizzle',
      'worker-configuration.d.ts',
      'public/docs/scalar.js',
      // The listener app as scripts/build-app.mjs builds it from web/.
      'public/app',
      'public/sw.js',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: {
        console: 'readonly',
        process: 'readonly',
        URL: 'readonly',
        fetch: 'readonly',
        setTimeout: 'readonly',
        setInterval: 'readonly',
        performance: 'readonly',
        Response: 'readonly',
        AbortSignal: 'readonly',
        TextEncoder: 'readonly',
        TextDecoder: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
    },
  },
  {
    // Rules that need the types: a promise nobody awaits (a write that may never happen,
    // an error nobody sees) and a cast that claims more than the compiler knows.
    files: ['**/*.ts', 'web/**/*.tsx'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/no-unnecessary-type-assertion': 'error',
    },
  },
  {
    // The listener app's event handlers may be async (a tap that calls the API); each one catches its own failures.
    files: ['web/**/*.tsx'],
    rules: { '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { attributes: false } }] },
  },
  {
    // Tests read JSON answers freely (helpers/client.ts `Json`); the code under test may not.
    files: ['src/**/*.ts'],
    rules: { '@typescript-eslint/no-unsafe-type-assertion': 'error' },
  },
  {
    // CommonJS configuration files of tools (dependency-cruiser reads .cjs).
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { module: 'writable', require: 'readonly' } },
  },
  prettier,
);
