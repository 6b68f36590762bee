#!/usr/bin/env node
// The seed step of `npm run dev`: fills the local D1 with demo data when it is empty.
// Each seed checks for itself whether its data is there, so running it again is safe.
// Accounts need no seed (register through the API); the demo catalogue joins here.
const seeds = [];

for (const seed of seeds) await seed();
console.log(seeds.length ? 'Local data seeded.' : 'Nothing to seed yet: accounts are created through the API.');
