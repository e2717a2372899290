package runner

import (
	"net"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/adapters"
	"github.com/checkfu/checkfu/admission"
	"github.com/checkfu/checkfu/custody/authz"
	"github.com/checkfu/checkfu/gateway/modelroute"
)

// HomeDirPrefix prefixes the name of an agent's private HOME, a fresh
// 0700 directory inside the instance's working directory that the Runner
// makes for each agent it runs under the door on a provider whose
// instances have one on the host (process). The agent's transcripts and
// whatever it writes as "its" keys land there, never in the host's HOME.
const HomeDirPrefix = ".checkfu-home-"

// MaxHomeFiles bounds the files an AgentLaunch may have written into the
// private HOME, and MaxHomeFileBytes each one's size: a launch is
// configuration, not a payload.
const (
	MaxHomeFiles     = 16
	MaxHomeFileBytes = 64 << 10
)

// modelDialect returns the dialect of the session's model route: the
// first model registration of the Runner's connections, or "" when the
// session has none.
func (r *Runner) modelDialect() modelroute.Dialect {
	for _, pt := range r.tools {
		if reg, ok := r.registry.Lookup(pt.Capability); ok && reg.Model.Dialect != "" {
			return reg.Model.Dialect
		}
	}
	return ""
}

// baseURLEnv returns the settings that point an agent speaking dialect d
// at the door's model relay at url, with admission.PlaceholderKey as its
// key: the ordinary base-URL and key variables of the vendor's SDKs. An
// agent that reads its base URL from a file (Codex) gets it from its
// AgentLaunch's Files instead.
func baseURLEnv(d modelroute.Dialect, url string) []string {
	switch d {
	case modelroute.AnthropicMessages:
		return []string{"ANTHROPIC_BASE_URL=" + url, "ANTHROPIC_API_KEY=" + admission.PlaceholderKey}
	case modelroute.Gemini:
		return []string{"GOOGLE_GEMINI_BASE_URL=" + url, "GEMINI_API_KEY=" + admission.PlaceholderKey}
	default:
		return []string{"OPENAI_BASE_URL=" + url + "/v1", "OPENAI_API_KEY=" + admission.PlaceholderKey}
	}
}

// modelEnv names the settings through which an agent finds a model and
// its key: every dialect's base-URL and key variables (baseURLEnv), the
// variables a harness entry sets to the model relay or the placeholder,
// and the vendors' other key variables their SDKs read. Under a model
// route they are the Runner's alone (see doorLaunch.render).
func modelEnv() map[string]bool {
	names := map[string]bool{"ANTHROPIC_AUTH_TOKEN": true, "GOOGLE_API_KEY": true}
	for _, d := range []modelroute.Dialect{modelroute.AnthropicMessages, modelroute.Gemini, modelroute.OpenAIResponses} {
		for _, kv := range baseURLEnv(d, "") {
			names[envName(kv)] = true
		}
	}
	for _, n := range admission.Agents() {
		a, _ := admission.Agent(n)
		for _, kv := range a.Env {
			if strings.Contains(kv, "{key}") || strings.Contains(kv, "{model_url}") {
				names[envName(kv)] = true
			}
		}
	}
	return names
}

// envName returns the name of the "K=V" entry kv.
func envName(kv string) string {
	name, _, _ := strings.Cut(kv, "=")
	return name
}

// shadow refuses, with checkfu.CodeConfigInvalid, an entry of env (the
// host's process spec's) that names one of the variables the Runner sets
// for the agent (owned): the Runner's value must be the agent's only
// one. Which of two entries of one name a program reads differs by
// provider: os/exec keeps the last, while a jail's exec passes both, and
// Go's and Node's getenv read the first, so the host's would win there.
// The refusal names the variable, never its value.
func shadow(env []string, owned map[string]bool) error {
	for _, kv := range env {
		if n := envName(kv); owned[n] {
			return checkfu.Refuse(checkfu.CodeConfigInvalid, "runner: the agent's process environment sets %s, which the Runner sets for it", checkfu.Quote(n))
		}
	}
	return nil
}

// checkRendered refuses, with checkfu.CodeConfigInvalid, the values a
// harness entry's settings are rendered with when one could rewrite
// them: those settings are TOML, JSON and argv the agent parses (Codex's
// config.toml and -c overrides, opencode's JSON), so a quote, backslash
// or line break in a value would end its string and add settings of its
// own. The model must be a name a model registration may list
// (authz.ValidModelName); the install directory and the HOME hold no
// quote, backslash or control character.
func checkRendered(model, install, home string) error {
	if model != "" && !authz.ValidModelName(model) {
		return checkfu.Refuse(checkfu.CodeConfigInvalid, "runner: the agent's model %s is not a model name", checkfu.Quote(model))
	}
	for _, v := range []string{install, home} {
		if strings.ContainsFunc(v, func(c rune) bool { return c < 0x20 || c == 0x7f || c == '"' || c == '\'' || c == '\\' }) {
			return checkfu.Refuse(checkfu.CodeConfigInvalid, "runner: the agent's path %s holds a quote, backslash or control character", checkfu.Quote(v))
		}
	}
	return nil
}

// modelAddr picks the loopback address of the door's model relay: a
// port free on the host now. A process's sandbox shares the host's
// loopback; a container has its own, where the port is free too. The
// door listens on it itself and fails the launch if another process
// took it in between.
func modelAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", checkfu.Refuse(checkfu.CodeConfigInvalid, "runner: no loopback port for the model relay: %v", err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr, nil
}

// privateHome makes an agent's private HOME inside workDir, 0700.
func privateHome(workDir string) (string, error) {
	home, err := os.MkdirTemp(workDir, HomeDirPrefix)
	if err != nil {
		return "", checkfu.Refuse(checkfu.CodeConfigInvalid, "runner: the agent's private HOME cannot be made: %v", err)
	}
	if err := os.Chmod(home, 0o700); err != nil {
		return "", checkfu.Refuse(checkfu.CodeConfigInvalid, "runner: the agent's private HOME cannot be made private: %v", err)
	}
	return home, nil
}

// writeHome writes a rendered launch's files (absolute paths under home,
// content) into home. It refuses a path outside home, more than
// MaxHomeFiles files and a file over MaxHomeFileBytes with
// checkfu.CodeConfigInvalid.
func writeHome(home string, files map[string]string) error {
	if len(files) > MaxHomeFiles {
		return checkfu.Refuse(checkfu.CodeConfigInvalid, "runner: an agent launch writes %d files into HOME, more than %d", len(files), MaxHomeFiles)
	}
	for p, content := range files {
		rel, err := filepath.Rel(home, filepath.Clean(p))
		if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, "../") || filepath.IsAbs(rel) {
			return checkfu.Refuse(checkfu.CodeConfigInvalid, "runner: an agent launch writes %s, outside its HOME", checkfu.Quote(p))
		}
		if len(content) > MaxHomeFileBytes {
			return checkfu.Refuse(checkfu.CodeConfigInvalid, "runner: an agent launch's file %s is over %d bytes", checkfu.Quote(rel), MaxHomeFileBytes)
		}
		dst := filepath.Join(home, rel)
		if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
			return checkfu.Refuse(checkfu.CodeConfigInvalid, "runner: an agent launch's file %s cannot be written: %v", checkfu.Quote(rel), err)
		}
		if err := os.WriteFile(dst, []byte(content), 0o600); err != nil {
			return checkfu.Refuse(checkfu.CodeConfigInvalid, "runner: an agent launch's file %s cannot be written: %v", checkfu.Quote(rel), err)
		}
	}
	return nil
}

// A doorLaunch is an agent process to run under the door: what the
// caller asked for and what the session and instance say.
type doorLaunch struct {
	spec    adapters.ProcessSpec
	dialect modelroute.Dialect     // the session's model route; "" for none
	agent   *admission.AgentLaunch // the harness entry, or nil
	install string                 // {install} of agent
	workDir string                 // the instance's directory on the host, or ""
	door    string                 // the door's path in the sandbox
	socket  string                 // the broker socket's path in the sandbox
}

// render returns the process spec that runs d.spec under the door,
// relaying the broker socket, and the agent's private HOME ("" when the
// instance has no directory on the host). With the session's model route
// the door serves it on a loopback port of the sandbox, and the agent
// gets the base-URL settings for it with admission.PlaceholderKey as its
// only key. A harness entry renders its argv (when the spec has none),
// settings and HOME files with that URL. With neither a model route nor
// a harness entry, d.spec is returned unchanged.
func (d doorLaunch) render() (adapters.ProcessSpec, string, error) {
	ps := d.spec
	if d.dialect == "" && d.agent == nil {
		return ps, "", nil
	}
	url, addr := "", ""
	if d.dialect != "" {
		var err error
		if addr, err = modelAddr(); err != nil {
			return ps, "", err
		}
		url = "http://" + addr
	}
	env := append([]string(nil), ps.Env...)
	home := ""
	if d.workDir != "" {
		var err error
		if home, err = privateHome(d.workDir); err != nil {
			return ps, "", err
		}
		env = append(env, "HOME="+home)
	}
	if d.dialect != "" {
		env = append(env, baseURLEnv(d.dialect, url)...)
	}
	argv := ps.Argv
	if d.agent != nil {
		if err := checkRendered(d.agent.Model, d.install, home); err != nil {
			return ps, "", err
		}
		r := d.agent.Render(d.install, home, url)
		if len(argv) == 0 {
			argv = r.Argv
		}
		for _, kv := range r.Env {
			if home == "" && strings.HasPrefix(kv, "HOME=") {
				continue // no private HOME here: the instance's own
			}
			env = append(env, kv)
		}
		if home != "" {
			if err := writeHome(home, r.Files); err != nil {
				return ps, "", err
			}
		}
	}
	if len(argv) == 0 || argv[0] == "" {
		return ps, "", checkfu.Refuse(checkfu.CodeConfigInvalid, "runner: the agent's process has no argv")
	}
	// The Runner's settings are the agent's only ones: its HOME, its
	// model route's and its harness entry's (opt-outs included), and,
	// under a model route, every model setting.
	owned := map[string]bool{}
	if d.dialect != "" {
		owned = modelEnv()
	}
	for _, kv := range env[len(ps.Env):] {
		owned[envName(kv)] = true
	}
	if err := shadow(ps.Env, owned); err != nil {
		return ps, "", err
	}
	door := []string{d.door, "run", "-socket", d.socket}
	if addr != "" {
		door = append(door, "-model", addr)
	}
	ps.Argv = append(append(door, "--"), argv...)
	ps.Env = env
	return ps, home, nil
}

// doorPath is where the door sits in the sandbox, beside socket.
func doorPath(socket string) string { return path.Join(path.Dir(socket), DoorName) }
