package main

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/checkfu/checkfu/internal/clitest"
)

// TestMain removes the checkfu binary that process tests build.
func TestMain(m *testing.M) { os.Exit(clitest.Run(m)) }

// runCLI runs one command line in-process and returns what it printed and
// its exit status.
func runCLI(t *testing.T, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	e := &env{stdin: strings.NewReader(stdin), stdout: &out, stderr: &errb, getenv: func(string) string { return "" }}
	code = run(e, args)
	return out.String(), errb.String(), code
}

func TestExitStatuses(t *testing.T) {
	tests := []struct {
		args []string
		code int
	}{
		{nil, exitUsage},
		{[]string{"-h"}, exitOK},
		{[]string{"no-such-command"}, exitUsage},
		{[]string{"version"}, exitOK},
		{[]string{"version", "-h"}, exitOK},
		{[]string{"version", "extra"}, exitUsage},
		{[]string{"version", "-bogus"}, exitUsage},
	}
	for _, tt := range tests {
		_, stderr, code := runCLI(t, "", tt.args...)
		if code != tt.code {
			t.Errorf("checkfu %v: exit %d, want %d (stderr %q)", tt.args, code, tt.code, stderr)
		}
	}
}

func TestEveryCommandHasHelp(t *testing.T) {
	for name := range commands {
		_, stderr, code := runCLI(t, "", name, "-h")
		if code != exitOK {
			t.Errorf("checkfu %s -h: exit %d, want 0 (stderr %q)", name, code, stderr)
		}
		if !strings.Contains(stderr, "usage: checkfu "+name) {
			t.Errorf("checkfu %s -h: stderr %q lacks a usage line", name, stderr)
		}
	}
}
