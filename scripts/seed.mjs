#!/usr/bin/env node
// The seed step of `npm run dev`: when the local catalogue is empty, imports the demo
// catalogue (data/demo-catalogue.json) through the running Worker's admin import.
// Safe to run again: a catalogue that has genres is left alone.
import { readFileSync } from 'node:fs';
import { devVar, importStations, root } from './lib/local-api.mjs';

export async function seedDemoCatalogue(url) {
  const genres = await fetch(`${url}/api/v1/genres`).then((r) => r.json());
  if (genres.data?.length > 0) {
    console.log(`Catalogue already seeded (${genres.data.length} genres).`);
    return;
  }
  const stations = JSON.parse(readFileSync(`${root}/data/demo-catalogue.json`, 'utf8'));
  const summary = await importStations({ url, token: devVar('ADMIN_TOKEN'), stations });
  console.log(`Demo catalogue seeded: ${summary.created} stations (${summary.skipped} skipped).`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await seedDemoCatalogue(process.argv[2] ?? 'http://localhost:8787');
}
