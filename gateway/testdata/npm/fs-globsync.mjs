// node:fs plus a globSync that throws, for Node.js < 22 (whose fs has none).
export * from 'node:fs';
import fs from 'node:fs';
export default fs;
export function globSync() {
  throw new Error('fs.globSync needs Node.js >= 22');
}
