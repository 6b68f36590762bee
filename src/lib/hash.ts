/**
 * FNV-1a, 32 bits: a fast, stable hash of a string for spreading and seeding (trending
 * shards, the day's discover shuffle, placeholder colours), never for security.
 */
export function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return hash;
}
