import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
// @ts-expect-error -- a plain .mjs module of the scripts, without type declarations
import { root } from '../../scripts/lib/local-worker.mjs';

/**
 * What the tests of the scripts that start a local Worker share (processes.test.ts, processes-bench.test.ts): each
 * script prints the process group it created, and after the script is gone, that group must have no living process.
 */

/** A scratch directory for the state of this file's runs, removed after its tests. */
export function scratchState(): string {
  const state = mkdtempSync(join(tmpdir(), 'radio-api-scripts-'));
  afterAll(() => rmSync(state, { recursive: true, force: true }));
  return state;
}

/** Runs `npm run <args>` and collects its output; `onOutput` sees it as it comes. */
export function npmRun(args: string[], onOutput: (text: string) => void = () => {}, env: Record<string, string> = {}) {
  const child = spawn('npm', ['run', '--silent', ...args], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  });
  let output = '';
  const collect = (chunk: Buffer) => {
    output += chunk.toString();
    onOutput(output);
  };
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, exited, output: () => output };
}

export const groupsIn = (text: string) => [...text.matchAll(/process group (\d+)/g)].map((m) => Number(m[1]));

export async function waitFor(condition: () => boolean | Promise<boolean>, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
