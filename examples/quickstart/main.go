// Command quickstart runs one whole checkfu session on embedded defaults,
// with no service to start: a SandboxProfile published and admitted,
// a provider selected by grade under the trust lanes, a real ACP agent
// process (ours, scripted: it re-executes this program in agent mode)
// whose evidence is checked, and its tool calls served through the
// capability gateway and custody's outbound edge to a local upstream:
// one allowed credentialed call, one denied header smuggle attempt and
// one approved external effect. Then it prints the session's event log,
// verifies its hash chain and says where the log file is.
//
//	go run ./examples/quickstart
//	go run ./examples/quickstart -provider process-wire     # the agent across acp/wire
//	go run ./examples/quickstart -provider docker           # in a container, when an engine answers
//	go run ./examples/quickstart -store postgres://...      # the log in PostgreSQL
//
// The upstream is an httptest TLS server on 127.0.0.1, reached as
// api.example.com through a DNS server this program owns; the edge's
// dialer treats 127.0.0.1/32 as public with the testing-only option
// egress.DialerConfig.TreatAsPublicForTesting, which it logs. Nothing in
// production code is loosened for it.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/checkfu/checkfu/runner/runnertest"
)

func main() {
	if os.Getenv(runnertest.AgentEnv) == "1" {
		os.Exit(runnertest.Main())
	}
	var o options
	flag.StringVar(&o.provider, "provider", "process", "where the agent runs: process (plain local process), process-wire (the same across acp/wire) or docker (a container; needs an engine at DOCKER_HOST)")
	flag.StringVar(&o.store, "store", "", "a postgres:// DSN to log to PostgreSQL; empty means SQLite in a temporary directory")
	flag.Parse()
	o.terminal = isTerminal(os.Stdout)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := run(ctx, o, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		fmt.Fprintln(os.Stderr, "hint: run it from the module root (go run ./examples/quickstart); -provider docker needs a Docker engine at DOCKER_HOST")
		os.Exit(1)
	}
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
