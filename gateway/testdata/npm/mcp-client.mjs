// A third-party MCP client driving the checkfu broker: the official
// TypeScript SDK (@modelcontextprotocol/sdk, pinned in package-lock.json)
// over streamable HTTP. Usage: node mcp-client.mjs URL ALLOWED DENIED
// where ALLOWED and DENIED are tool names. It lists the tools, calls both
// with empty-object arguments, and prints one JSON line:
//   {"tools":[...names],"allowed":{"isError":b,"text":s},"denied":{...}}
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const [url, allowed, denied] = process.argv.slice(2);
const client = new Client({ name: 'checkfu-interop', version: '1.0.0' });
await client.connect(new StreamableHTTPClientTransport(new URL(url)));
const { tools } = await client.listTools();
const call = async (name) => {
  const r = await client.callTool({ name, arguments: {} });
  return { isError: r.isError === true, text: r.content.map((c) => c.text ?? '').join('\n') };
};
const out = { tools: tools.map((t) => t.name), allowed: await call(allowed), denied: await call(denied) };
await client.close();
process.stdout.write(JSON.stringify(out) + '\n');
