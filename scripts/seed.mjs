#!/usr/bin/env node
// The seed step of `npm run dev` (which runs it only when the local catalogue is empty):
// imports the demo catalogue (data/demo-catalogue.json) through a Worker's admin import.
// Importing it again changes nothing that is unchanged (the import is idempotent).
import { readFileSync } from 'node:fs';
import { devVar, importStations, root } from './lib/local-api.mjs';

export async function seedDemoCatalogue(url, token = devVar('ADMIN_TOKEN')) {
  const stations = JSON.parse(readFileSync(`${root}/data/demo-catalogue.json`, 'utf8'));
  const summary = await importStations({ url, token, stations });
  console.log(`demo catalogue seeded: ${summary.created} stations created (${summary.skipped} skipped).`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await seedDemoCatalogue(process.argv[2] ?? 'http://localhost:8787');
}
