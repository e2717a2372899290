# Installs the real third-party ACP agents pinned by .ci/agents's lockfile
# (Claude Code's ACP adapter @zed-industries/claude-code-acp 0.16.2,
# @zed-industries/codex-acp 0.16.0 and Gemini CLI @google/gemini-cli 0.61.0)
# and exports their commands:
#   CHECKFU_TEST_CLAUDE_ACP   node .../claude-code-acp/dist/index.js
#   CHECKFU_TEST_CODEX_ACP    .../codex-acp/bin/codex-acp.js (native binary
#                             from its platform package)
#   CHECKFU_TEST_GEMINI_CLI   node .../gemini-cli/bundle/gemini.js (the test
#                             starts it by its harness entry's argv, under
#                             CHECKFU_TEST_AGENTS_DIR)
#   CHECKFU_TEST_AGENTS_DIR   the install directory (node_modules' parent),
#                             for a read-only bind into the jail.
# --ignore-scripts: nothing from the registry runs at install time.
# Sourced by .ci/run after 30-acp-agent.sh (which provides node and npm).
agents_dir=$work/real-agents
mkdir -p "$agents_dir"
cp .ci/agents/package.json .ci/agents/package-lock.json "$agents_dir/"
(cd "$agents_dir" && npm ci --ignore-scripts --no-audit --no-fund >/dev/null)
claude_acp=$agents_dir/node_modules/@zed-industries/claude-code-acp/dist/index.js
codex_acp=$agents_dir/node_modules/@zed-industries/codex-acp/bin/codex-acp.js
test -f "$claude_acp"
test -f "$codex_acp"
gemini_cli=$agents_dir/node_modules/@google/gemini-cli/bundle/gemini.js
test -f "$gemini_cli"
export CHECKFU_TEST_CLAUDE_ACP="node $claude_acp"
export CHECKFU_TEST_CODEX_ACP="node $codex_acp"
export CHECKFU_TEST_GEMINI_CLI="node $gemini_cli"
export CHECKFU_TEST_AGENTS_DIR="$agents_dir"
echo "real acp agents ready: $CHECKFU_TEST_CLAUDE_ACP; $CHECKFU_TEST_CODEX_ACP; $CHECKFU_TEST_GEMINI_CLI"
