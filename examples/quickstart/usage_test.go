package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/adapters/docker"
	"github.com/checkfu/checkfu/eventlog"
)

// TestUsageErrors: what main exits 2 for.
func TestUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		o    options
		args []string
		ok   bool
	}{
		{options{provider: "process", agent: "claude-code"}, nil, true},
		{options{provider: "jail", agent: "codex"}, nil, true},
		{options{provider: "docker", namePrefix: "qs", agent: "claude-code"}, nil, true},
		{options{provider: "process", agent: "gemini-cli"}, nil, true},
		{options{provider: "process", agent: "opencode"}, nil, false},
		{options{provider: "process", agent: ""}, nil, false},
		{options{provider: "nope"}, nil, false},
		{options{provider: ""}, nil, false},
		{options{provider: "process"}, []string{"extra"}, false},
		{options{provider: "process", namePrefix: "qs"}, nil, false},
	} {
		if err := checkUsage(tc.o, tc.args); (err == nil) != tc.ok {
			t.Errorf("checkUsage(%+v, %q) = %v, want ok %v", tc.o, tc.args, err, tc.ok)
		}
	}
}

// TestHintsFitTheError: each kind of failure gets its own hint, and an
// error with nothing better to say gets none (not "run it from the
// module root").
func TestHintsFitTheError(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{checkfu.Refuse(docker.CodeEngineUnreachable, "x"), "DOCKER_HOST"},
		{checkfu.Refuse(docker.CodeImageBuildFailed, "x"), "busybox-static"},
		{fmt.Errorf("%w: %w", errDoorBuild, checkfu.Refuse(docker.CodeImageBuildFailed, "x")), "cmd/checkfu-door"},
		{fmt.Errorf("wrapped: %w", errOutsideModule), "inside the checkfu module"},
		{&eventlog.StoreError{Op: "append", Err: errors.New("down")}, "-store"},
		{context.Canceled, "-keep"},
		{errors.New("the agent said no"), ""},
	} {
		got := hint(tc.err)
		if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
			t.Errorf("hint(%v) = %q, want one with %q", tc.err, got, tc.want)
		}
	}
}

// TestQuickstartRemovesWhatItCreated: without -keep the run's temporary
// directory (the SQLite log) is gone at exit; with -keep it stays.
func TestQuickstartRemovesWhatItCreated(t *testing.T) {
	logLine := regexp.MustCompile(`(?m)^log: (\S+) \(SQLite`)
	for _, keep := range []bool{false, true} {
		var out bytes.Buffer
		if err := run(context.Background(), options{provider: "process", keep: keep}, &out); err != nil {
			t.Fatalf("keep %v: %v\n%s", keep, err, out.String())
		}
		m := logLine.FindStringSubmatch(out.String())
		if m == nil {
			t.Fatalf("keep %v: no log line in\n%s", keep, out.String())
		}
		dir := filepath.Dir(m[1])
		_, err := os.Stat(dir)
		if keep {
			if err != nil {
				t.Errorf("-keep: the run's directory %s is gone: %v", dir, err)
			}
			os.RemoveAll(dir)
		} else if !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the run's directory %s is still there (%v)", dir, err)
			os.RemoveAll(dir)
		}
	}
}
