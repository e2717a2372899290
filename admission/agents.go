package admission

import (
	"path"
	"slices"
	"strings"
)

// PlaceholderKey is the model key every agent is given: a constant that
// is not a secret and is never substituted. The model route drops it
// with every other credential header, and the outbound edge attaches the
// real key because the registration says so, wherever the placeholder
// went (an agent sends its key to places other than its base URL: Claude
// Code's shutdown metrics call does).
const PlaceholderKey = "checkfu-placeholder-not-a-key"

// An AgentLaunch is how a third-party ACP agent of the harness catalog is
// run with the one door: what to start, the settings that point it at
// the door's model route with PlaceholderKey, the opt-outs that stop its
// own traffic, and how its MCP tool names look. Values may hold the
// placeholders {install} (where the agent's package is installed),
// {home} (the session's private HOME inside the sandbox), {model_url}
// (the door's model relay, http://127.0.0.1:PORT), {key}
// (PlaceholderKey) and, in ToolName and ToolNamespace, {server} and
// {tool}.
type AgentLaunch struct {
	// Vendor is who makes the agent.
	Vendor string
	// Package is the pinned package (name@version) it is installed from.
	Package string
	// Argv starts the agent, speaking ACP on its stdio.
	Argv []string
	// Dialect is the model API it speaks (a gateway/modelroute Dialect).
	Dialect string
	// Model is the model the entry pins the agent to, written where
	// Argv, Env and Files say {model}: the one a host allows the agent on
	// the model route.
	Model string
	// Env is added to the agent's environment ("K=V"): its base URL, its
	// placeholder key, its opt-outs.
	Env []string
	// Files are written under the session's private HOME before launch
	// (path relative to HOME, content).
	Files map[string]string
	// OptOuts names the settings (in Env or Files) that stop the agent's
	// own traffic: telemetry, updates, metrics, model catalogue fetches.
	OptOuts []string
	// ToolName is the name the model sees for MCP tool {tool} of server
	// {server}.
	ToolName string
	// ToolNamespace, when set, is the namespace tool that holds ToolName
	// (Codex groups each server's tools in one).
	ToolNamespace string
	// PermissionTitle, when set, is the title of the agent's ACP
	// permission request for tool {tool} of server {server}, where it
	// is not ToolName (Codex: "Tool: {server}/{tool}").
	PermissionTitle string
	// PermissionArguments, when set, is the member of the permission
	// request's rawInput that holds the tool's arguments (Codex:
	// "arguments"); empty means rawInput is the arguments.
	PermissionArguments string
	// PermissionByToolCall says the agent's permission requests name no
	// tool (codex-acp asks "Approve MCP tool call" for every one): the
	// tool is the one of the tool call the agent announced earlier under
	// the same toolCallId (ACP session/update tool_call), whose title
	// and rawInput PermissionTitle and PermissionArguments describe.
	PermissionByToolCall bool
}

// agentLaunches are the agents the notes show running offline under ACP
// with a scripted model (Node.js 20).
var agentLaunches = map[string]AgentLaunch{
	"claude-code": {
		Vendor: "Anthropic", Package: "@zed-industries/claude-code-acp@0.16.2",
		Argv:    []string{"node", "{install}/node_modules/@zed-industries/claude-code-acp/dist/index.js"},
		Dialect: "anthropic-messages", Model: "claude-sonnet-4-5-20250929",
		Env: []string{"HOME={home}", "ANTHROPIC_BASE_URL={model_url}", "ANTHROPIC_API_KEY={key}",
			// Its main and its small model are both the pinned one.
			"ANTHROPIC_MODEL={model}", "ANTHROPIC_SMALL_FAST_MODEL={model}",
			// As root, session/new fails without it.
			"IS_SANDBOX=1",
			"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1", "CLAUDE_CODE_DISABLE_FAST_MODE=1"},
		OptOuts:  []string{"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "DISABLE_AUTOUPDATER", "DISABLE_TELEMETRY", "CLAUDE_CODE_DISABLE_FAST_MODE"},
		ToolName: "mcp__{server}__{tool}",
	},
	"codex": {
		Vendor: "OpenAI", Package: "@zed-industries/codex-acp@0.16.0",
		// The provider is given on the command line too, so that it holds
		// where the Runner writes no HOME file (a jail's HOME is its own).
		Argv: []string{"{install}/node_modules/@zed-industries/codex-acp-linux-x64/bin/codex-acp",
			"-c", `model="{model}"`, "-c", `model_provider="checkfu"`,
			"-c", `model_providers.checkfu={ name = "checkfu model route", base_url = "{model_url}/v1", env_key = "CHECKFU_MODEL_KEY", wire_api = "responses", requires_openai_auth = false, request_max_retries = 0, stream_max_retries = 0 }`},
		Dialect: "openai-responses", Model: "gpt-5.4",
		// OPENAI_BASE_URL is ignored: only the config file's provider works.
		Env: []string{"HOME={home}", "CHECKFU_MODEL_KEY={key}", "RUST_LOG=warn"},
		Files: map[string]string{".codex/config.toml": `model = "{model}"
model_provider = "checkfu"
check_for_update_on_startup = false

[model_providers.checkfu]
name = "checkfu model route"
base_url = "{model_url}/v1"
env_key = "CHECKFU_MODEL_KEY"
wire_api = "responses"
requires_openai_auth = false
request_max_retries = 0
stream_max_retries = 0

[analytics]
enabled = false
`},
		OptOuts:       []string{"check_for_update_on_startup", "analytics.enabled"},
		ToolName:      "{tool}",
		ToolNamespace: "mcp__{server}",
		// codex-acp 0.16.0 announces the call as "Tool: checkfu/list_issues"
		// with rawInput {"server", "tool", "arguments"}, then asks
		// "Approve MCP tool call" under the same toolCallId.
		PermissionTitle: "Tool: {server}/{tool}", PermissionArguments: "arguments", PermissionByToolCall: true,
	},
	"gemini-cli": {
		Vendor: "Google", Package: "@google/gemini-cli@0.61.0",
		Argv:    []string{"node", "{install}/node_modules/@google/gemini-cli/bundle/gemini.js", "--acp", "--model", "{model}"},
		Dialect: "gemini", Model: "gemini-2.5-pro",
		// Without GEMINI_CLI_TRUST_WORKSPACE the mcpServers are silently
		// never started.
		Env: []string{"HOME={home}", "GOOGLE_GEMINI_BASE_URL={model_url}", "GEMINI_API_KEY={key}", "GEMINI_CLI_TRUST_WORKSPACE=true"},
		Files: map[string]string{".gemini/settings.json": `{"privacy":{"usageStatisticsEnabled":false},"general":{"enableAutoUpdate":false,"enableAutoUpdateNotification":false},"telemetry":{"enabled":false}}
`},
		OptOuts:  []string{"privacy.usageStatisticsEnabled", "general.enableAutoUpdate", "telemetry.enabled"},
		ToolName: "mcp_{server}_{tool}",
		// gemini-cli 0.61.0 asks permission for an MCP tool with the
		// tool's display name as the title and no rawInput (its
		// arguments only as text, when short): a read_only tool's dry
		// run binds {}, and an external_effect tool's approval cannot
		// be bound to the arguments it will call with.
		PermissionTitle: "{tool} ({server} MCP Server)",
	},
	"opencode": {
		Vendor: "SST", Package: "opencode-ai@1.18.33",
		Argv:    []string{"{install}/node_modules/opencode-ai/bin/opencode.exe", "acp"},
		Dialect: "anthropic-messages", Model: "claude-sonnet-4-5",
		Env: []string{"HOME={home}", "XDG_CONFIG_HOME={home}/.config", "OPENCODE_DISABLE_MODELS_FETCH=1", "OPENCODE_DISABLE_AUTOUPDATE=1",
			"OPENCODE_DISABLE_DEFAULT_PLUGINS=1", "OPENCODE_DISABLE_LSP_DOWNLOAD=1", "OPENCODE_DISABLE_SHARE=1"},
		Files: map[string]string{".config/opencode/opencode.json": `{"model":"anthropic/{model}","small_model":"anthropic/{model}","autoupdate":false,"share":"disabled",
 "provider":{"anthropic":{"options":{"baseURL":"{model_url}/v1","apiKey":"{key}"}}}}
`},
		OptOuts: []string{"OPENCODE_DISABLE_MODELS_FETCH", "OPENCODE_DISABLE_AUTOUPDATE", "OPENCODE_DISABLE_DEFAULT_PLUGINS",
			"OPENCODE_DISABLE_LSP_DOWNLOAD", "OPENCODE_DISABLE_SHARE", "autoupdate", "share"},
		ToolName: "{server}_{tool}",
	},
}

// Agent returns the launch of the third-party agent harness name
// ("claude-code", "codex", "gemini-cli", "opencode"), a copy.
func Agent(name string) (AgentLaunch, bool) {
	a, ok := agentLaunches[name]
	if !ok {
		return AgentLaunch{}, false
	}
	a.Argv, a.Env, a.OptOuts = slices.Clone(a.Argv), slices.Clone(a.Env), slices.Clone(a.OptOuts)
	files := make(map[string]string, len(a.Files))
	for k, v := range a.Files {
		files[k] = v
	}
	a.Files = files
	return a, true
}

// Agents returns the names of the agent harnesses, sorted.
func Agents() []string {
	var names []string
	for n := range agentLaunches {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// A Rendered launch is an AgentLaunch with its placeholders filled in.
type Rendered struct {
	Argv  []string
	Env   []string
	Files map[string]string // absolute path under home, content
}

// Render fills in a's placeholders: install, the session's private home
// (an absolute path inside the sandbox), the door's model URL. The only
// key it writes anywhere is PlaceholderKey.
func (a AgentLaunch) Render(install, home, modelURL string) Rendered {
	r := strings.NewReplacer("{install}", install, "{home}", home, "{model_url}", modelURL, "{model}", a.Model, "{key}", PlaceholderKey)
	out := Rendered{Files: map[string]string{}}
	for _, s := range a.Argv {
		out.Argv = append(out.Argv, r.Replace(s))
	}
	for _, s := range a.Env {
		out.Env = append(out.Env, r.Replace(s))
	}
	for p, c := range a.Files {
		out.Files[path.Join(home, p)] = r.Replace(c)
	}
	return out
}

// Permission returns the title of the agent's permission request for
// tool of MCP server server: PermissionTitle, else the name its model
// sees (ToolName).
func (a AgentLaunch) Permission(server, tool string) string {
	if a.PermissionTitle == "" {
		name, _ := a.Tool(server, tool)
		return name
	}
	return strings.NewReplacer("{server}", server, "{tool}", tool).Replace(a.PermissionTitle)
}

// Tool returns the name the agent's model sees for tool of MCP server
// server, and the namespace tool holding it ("" when there is none).
func (a AgentLaunch) Tool(server, tool string) (name, namespace string) {
	r := strings.NewReplacer("{server}", server, "{tool}", tool)
	return r.Replace(a.ToolName), r.Replace(a.ToolNamespace)
}
