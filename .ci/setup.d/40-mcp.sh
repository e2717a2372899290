# Installs the pinned third-party MCP software the broker is tested
# against, from gateway/testdata/npm's lockfile, and exports the commands
# the gateway/broker interop tests read (space-separated, no quoting):
#   CHECKFU_TEST_MCP_CLIENT       gateway/testdata/npm/mcp-client.mjs on the
#                                 official @modelcontextprotocol/sdk 1.32.2;
#   CHECKFU_TEST_MCP_CONFORMANCE  @modelcontextprotocol/conformance 0.1.16,
#                                 through run-conformance.mjs (which shims
#                                 fs.globSync on Node.js < 22; see there).
# Sourced by .ci/run.
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
	apt_install nodejs npm
fi
node_major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$node_major" -lt 20 ]; then
	echo "the MCP interop tests need Node.js >= 20 (module.register); found $(node --version)" >&2
	exit 1
fi
mcp_dir=$work/mcp-interop
mkdir -p "$mcp_dir"
cp gateway/testdata/npm/package.json gateway/testdata/npm/package-lock.json "$mcp_dir/"
# --ignore-scripts: nothing from the registry runs at install time.
# One dependency of the suite (content-type under @octokit/request)
# declares node >= 22 (EBADENGINE is a
# warning); on Node.js 20 the client and the server scenarios run, and
# run-conformance.mjs covers the one API 20 lacks.
(cd "$mcp_dir" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null)
test -f "$mcp_dir/node_modules/@modelcontextprotocol/sdk/package.json"
test -f "$mcp_dir/node_modules/@modelcontextprotocol/conformance/dist/index.js"
# The scripts import the packages by name: they must sit beside node_modules.
cp gateway/testdata/npm/mcp-client.mjs gateway/testdata/npm/run-conformance.mjs \
	gateway/testdata/npm/fs-hooks.mjs gateway/testdata/npm/fs-globsync.mjs "$mcp_dir/"
export CHECKFU_TEST_MCP_CLIENT="node $mcp_dir/mcp-client.mjs"
export CHECKFU_TEST_MCP_CONFORMANCE="node $mcp_dir/run-conformance.mjs"
echo "mcp interop ready: $CHECKFU_TEST_MCP_CLIENT; $CHECKFU_TEST_MCP_CONFORMANCE"
