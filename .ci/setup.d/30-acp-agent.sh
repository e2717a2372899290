# Installs the pinned ACP agents used by the acp integration tests from
# acp/testdata/npm's lockfile and exports their commands (space-separated,
# no quoting):
#   CHECKFU_TEST_ACP_AGENT      the third-party example agent shipped in
#                               @zed-industries/agent-client-protocol 0.4.5,
#                               run by tsx;
#   CHECKFU_TEST_ACP_SDK_AGENT  acp/testdata/sdk-agent.mjs on the official
#                               @agentclientprotocol/sdk 2.4.0, plain node.
# Sourced by .ci/run.
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
	apt_install nodejs npm
fi
node_major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$node_major" -lt 18 ]; then
	echo "acp agents need Node.js >= 18 (tsx, esbuild); found $(node --version)" >&2
	exit 1
fi
acp_dir=$work/acp-agent
mkdir -p "$acp_dir"
cp acp/testdata/npm/package.json acp/testdata/npm/package-lock.json "$acp_dir/"
# --ignore-scripts: nothing from the registry runs at install time; tsx
# finds esbuild's prebuilt binary through its platform package.
(cd "$acp_dir" && npm ci --ignore-scripts --no-audit --no-fund >/dev/null)
acp_agent_ts=$acp_dir/node_modules/@zed-industries/agent-client-protocol/typescript/examples/agent.ts
test -f "$acp_agent_ts"
export CHECKFU_TEST_ACP_AGENT="node $acp_dir/node_modules/tsx/dist/cli.mjs $acp_agent_ts"
# The SDK agent imports the SDK by name: it must sit beside node_modules.
cp acp/testdata/sdk-agent.mjs "$acp_dir/"
export CHECKFU_TEST_ACP_SDK_AGENT="node $acp_dir/sdk-agent.mjs"
echo "acp agents ready: $CHECKFU_TEST_ACP_AGENT; $CHECKFU_TEST_ACP_SDK_AGENT"
