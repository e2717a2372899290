// Runs the pinned @modelcontextprotocol/conformance CLI. The suite imports
// fs.globSync, which Node.js has only from 22; on an older Node the import
// is resolved to fs-globsync.mjs, whose globSync throws. Only the CLI's
// tier-check command calls it, never the server run used here.
import { register } from 'node:module';
const major = Number(process.versions.node.split('.')[0]);
if (major < 22) {
  register('./fs-hooks.mjs', import.meta.url);
}
await import('@modelcontextprotocol/conformance/dist/index.js');
