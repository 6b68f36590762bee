#!/usr/bin/env node
// npm run client:pack-check
//
// The client package (clients/typescript, @radio-api/client) as an app gets it, from nothing
// but checked-in files:
// 1. `npm pack` with no dist/ left from before: the package's `prepack` builds it;
// 2. the tarball holds what package.json's exports name, and no sources;
// 3. a copy of examples/packed-app installs the tarball as an app would (`npm install`; the
//    registry only for openapi-fetch and typescript, from npm's cache when it has them);
// 4. `tsc --noEmit` compiles the app against the installed package (Node's ESM resolution, the
//    package's .d.ts checked too), and Node imports it.
// Everything happens in a temporary folder, removed afterwards.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const packageDir = join(root, 'clients/typescript');
const work = mkdtempSync(join(tmpdir(), 'radio-client-pack-'));

/** Runs a command to completion in `cwd`; its output is shown only when it fails. */
function run(command, args, cwd) {
  const result = spawnSync(command, args, { cwd, encoding: 'utf8' });
  if (result.status !== 0) {
    process.stderr.write(result.stdout ?? '');
    process.stderr.write(result.stderr ?? '');
    throw new Error(`${command} ${args.join(' ')} (in ${cwd}) failed with ${result.status ?? result.signal}`);
  }
  return result.stdout;
}

function fail(message) {
  throw new Error(message);
}

try {
  // 1. As a clean clone has it: no build output.
  rmSync(join(packageDir, 'dist'), { recursive: true, force: true });
  run('npm', ['pack', '--pack-destination', work], packageDir);
  const [tarball = fail('npm pack made no tarball')] = readdirSync(work).filter((name) => name.endsWith('.tgz'));
  const tarballPath = join(work, tarball);

  // 2. What the tarball holds.
  const files = new Set(
    run('tar', ['-tzf', tarballPath], work)
      .split('\n')
      .filter(Boolean)
      .map((path) => path.replace(/^package\//, '')),
  );
  const manifest = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8'));
  const exported = Object.values(manifest.exports['.']).map((path) => path.replace(/^\.\//, ''));
  for (const path of ['package.json', 'README.md', 'dist/schema.d.ts', ...exported]) {
    if (!files.has(path)) fail(`${tarball} lacks ${path}`);
  }
  const unexpected = [...files].filter((path) => !/^(package\.json|README\.md|dist\/[\w-]+\.(js|d\.ts))$/.test(path));
  if (unexpected.length > 0) fail(`${tarball} holds more than the build: ${unexpected.join(', ')}`);

  // 3. The example app, installing the tarball in place of the registry's package.
  const app = join(work, 'app');
  cpSync(join(root, 'examples/packed-app'), app, { recursive: true });
  const appManifest = JSON.parse(readFileSync(join(app, 'package.json'), 'utf8'));
  appManifest.dependencies[manifest.name] = `file:${tarballPath}`;
  writeFileSync(join(app, 'package.json'), JSON.stringify(appManifest, null, 2));
  run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline'], app);

  // 4. Compiled against the installed package, then imported by Node.
  run(process.execPath, [join(app, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json'], app);
  const probe = `
    const client = await import(${JSON.stringify(manifest.name)});
    const api = client.createRadioClient({ baseUrl: 'https://radio.example.com' });
    if (typeof api.GET !== 'function' || client.errorReason({ success: false, error: 'not_found' }) !== 'not_found') {
      throw new Error('the package does not export what its types say');
    }
    const helpers = ['items', 'pages', 'paginate', 'deleteAccount', 'sessions', 'revokeOtherSessions', 'PageError'];
    if (helpers.some((name) => typeof client[name] !== 'function') || api.bookmark?.current !== null) {
      throw new Error('the package lacks its paging or account helpers, or the client its bookmark');
    }`;
  run(process.execPath, ['--input-type=module', '-e', probe], app);

  console.log(
    `${tarball}: ${files.size} files; examples/packed-app installs it, compiles against it (tsc) and imports it (node).`,
  );
} finally {
  rmSync(work, { recursive: true, force: true });
}
