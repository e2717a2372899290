// Command quickstart runs one whole checkfu session on embedded defaults,
// with no service to start: a SandboxProfile published and admitted,
// a provider selected by grade under the trust lanes, a real ACP agent
// process (ours, scripted: it re-executes this program in agent mode)
// whose evidence is checked, and its tool calls served through the
// capability gateway and custody's outbound edge to a local upstream:
// one allowed credentialed call, one denied header smuggle attempt and
// one approved external effect. When the agents pinned in .ci/agents are
// installed where CHECKFU_TEST_AGENTS_DIR says (.ci/setup.d/50-real-agents.sh
// exports it), it then runs one turn of a real coding agent (Codex, or
// Claude Code or Gemini CLI with -agent) through the Runner and the door on
// the same provider: the agent lists the session's tools, calls
// list_issues, and its model calls reach, only through the model route, a
// scripted model server on loopback (a mock, runnertest.Model); the run
// fails if that server missed the key the edge attaches or saw the
// agent's placeholder, or if a secret reached what the agent said or
// wrote. Otherwise that step is one line saying how to enable it. On the
// jail, step 8 runs a second, capability-free session whose allowlist
// names only a mock host, the jail's guard deciding each request of its
// scripted agent: the allowed host answers, a package-manager host the
// profile does not list is refused and never reached, a connection that
// ignores the proxy gets nowhere; the run fails otherwise (elsewhere the
// step is one line saying why it is skipped). Then it prints the main
// session's event log, verifies its hash chain and says where the log
// file is.
//
//	go run ./examples/quickstart
//	go run ./examples/quickstart -provider process-wire     # the agent across acp/wire
//	go run ./examples/quickstart -provider docker           # in a container, when an engine answers
//	go run ./examples/quickstart -store postgres://...      # the log in PostgreSQL
//	go run ./examples/quickstart -keep                      # keep the log directory (and the Docker image)
//	go run ./examples/quickstart -agent claude-code         # step 7 with Claude Code (needs node)
//	go run ./examples/quickstart -agent gemini-cli          # step 7 with Gemini CLI (needs node)
//
// A usage error exits 2, a failed run 1 with a hint that fits the error.
// What the run created is removed at exit unless -keep is given.
//
// The upstream is an httptest TLS server on 127.0.0.1, reached as
// api.example.com through a DNS server this program owns; the edge's
// dialer treats 127.0.0.1/32 as public with the testing-only option
// egress.DialerConfig.TreatAsPublicForTesting, which it logs. Nothing in
// production code is loosened for it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/adapters/docker"
	"github.com/checkfu/checkfu/adapters/jail"
	"github.com/checkfu/checkfu/eventlog"
	"github.com/checkfu/checkfu/runner/runnertest"
)

func main() {
	jail.InitMain() // a jail's init stage is this binary, re-executed
	if os.Getenv(runnertest.AgentEnv) == "1" {
		os.Exit(runnertest.Main())
	}
	var o options
	flag.StringVar(&o.provider, "provider", "jail", "where the agent runs: jail (a namespace jail; falls back to process where the kernel cannot), process (plain local process), process-wire (the same across acp/wire) or docker (a container; needs an engine at DOCKER_HOST)")
	flag.StringVar(&o.store, "store", "", "a postgres:// DSN to log to PostgreSQL; empty means SQLite in a temporary directory")
	flag.BoolVar(&o.keep, "keep", false, "keep what the run created (the temporary directory with the SQLite log, the Docker image); by default it is removed at exit")
	flag.StringVar(&o.namePrefix, "name-prefix", "", "with -provider docker: the prefix of the image names (default: the adapter's, checkfu)")
	flag.StringVar(&o.agent, "agent", "codex", "the real coding agent of step 7, when "+agentsDirEnv+" names where .ci/agents is installed: codex (about 3 s), claude-code (about 8 s, on node) or gemini-cli (about 5 s, on node)")
	flag.Parse()
	if err := checkUsage(o, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "usage error:", err)
		flag.Usage()
		os.Exit(2)
	}
	o.terminal = isTerminal(os.Stdout)
	o.agentsDir = os.Getenv(agentsDirEnv)
	// No overall deadline: a cold Docker build (a package download and a
	// static go build) takes minutes on a slow machine. Each step bounds
	// its own waits; an interrupt ends the run and its cleanup runs.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		if h := hint(err); h != "" {
			fmt.Fprintln(os.Stderr, "hint:", h)
		}
		stop()
		os.Exit(1)
	}
}

// checkUsage refuses what is a usage error: an unknown -provider, a
// -name-prefix without docker, or arguments.
func checkUsage(o options, args []string) error {
	if len(args) != 0 {
		return fmt.Errorf("the quickstart takes no arguments (got %q)", args[0])
	}
	switch o.provider {
	case "jail", "process", "process-wire", "docker":
	default:
		return fmt.Errorf("-provider %q is not jail, process, process-wire or docker", o.provider)
	}
	if o.agent != "claude-code" && o.agent != "codex" && o.agent != "gemini-cli" {
		return fmt.Errorf("-agent %q is not claude-code, codex or gemini-cli", o.agent)
	}
	if o.namePrefix != "" && o.provider != "docker" {
		return fmt.Errorf("-name-prefix goes with -provider docker")
	}
	return nil
}

// hint returns what to do about err, by its code, or "" when there is
// nothing better to say than the error.
func hint(err error) string {
	code, _ := checkfu.CodeOf(err)
	switch {
	case errors.Is(err, errDoorBuild):
		return "step 7 builds the door from cmd/checkfu-door with the go command: run it inside the checkfu module, or unset " + agentsDirEnv + " to skip the real agent"
	case code == docker.CodeEngineUnreachable:
		return "-provider docker needs a Docker engine: start one, or set DOCKER_HOST=unix:///path/to/docker.sock"
	case code == docker.CodeImageBuildFailed:
		return "building the agent image needs the go command and, on the first run, apt-get download busybox-static (a Debian mirror); run it again once those work"
	case errors.Is(err, errOutsideModule):
		return "run it inside the checkfu module: go run ./examples/quickstart"
	case errors.Is(err, context.Canceled):
		return "interrupted; what the run created was removed (pass -keep to keep it)"
	case code == checkfu.CodeConfigInvalid:
		return "run go run ./examples/quickstart -h for the flags"
	}
	var se *eventlog.StoreError
	if errors.As(err, &se) {
		return "the log store failed: with -store, check the PostgreSQL DSN and that the server answers"
	}
	return ""
}

// isTerminal reports whether f is a character device.
func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// progress prints one line per step: on a terminal a line that is
// rewritten when the step ends, plain lines otherwise.
type progress struct {
	w        io.Writer
	terminal bool
	n, of    int
	name     string
	start    time.Time
}

func (p *progress) step(name string) {
	p.n++
	p.name, p.start = name, time.Now()
	if p.terminal {
		fmt.Fprintf(p.w, "  [%d/%d] %s ...", p.n, p.of, name)
	}
}

// say prints a line inside the running step: on a terminal above the
// step's line, which is then drawn again.
func (p *progress) say(format string, args ...any) {
	if p.terminal && p.name != "" {
		fmt.Fprintf(p.w, "\r\033[K"+format+"\n  [%d/%d] %s ...", append(args, p.n, p.of, p.name)...)
		return
	}
	fmt.Fprintf(p.w, format+"\n", args...)
}

func (p *progress) done(note string) {
	d := time.Since(p.start).Round(time.Millisecond)
	if note != "" {
		note = ": " + note
	}
	if p.terminal {
		fmt.Fprintf(p.w, "\r\033[K  [%d/%d] %s%s (%s)\n", p.n, p.of, p.name, note, d)
	} else {
		fmt.Fprintf(p.w, "step %d/%d %s%s (%s)\n", p.n, p.of, p.name, note, d)
	}
	p.name = ""
}
