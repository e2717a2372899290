// Resolves the conformance suite's import of "fs" to fs-globsync.mjs on
// Node.js < 22. Nothing else is redirected.
export async function resolve(specifier, context, next) {
  if ((specifier === 'fs' || specifier === 'node:fs') && context.parentURL?.includes('/@modelcontextprotocol/conformance/')) {
    return { url: new URL('./fs-globsync.mjs', import.meta.url).href, shortCircuit: true };
  }
  return next(specifier, context);
}
