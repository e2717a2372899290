//go:build unix

package main

import (
	"bytes"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestRun runs the example and checks what the Runner concluded.
func TestRun(t *testing.T) {
	var out bytes.Buffer
	if err := run(&out); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	for _, want := range []string{
		"provider example:scratch-provider@1, placement in_process\n",
		"  adapters.Check: ok; can carry an ACP agent: ok\n",
		"  grade without a receipt: unsupported; network modes [unrestricted]\n",
		"process in session-1: exit 0, environment [GREETING HOME PATH PWD TMPDIR]\n",
		"evidence: label mock, match ok, assurance isolation_checked\n",
		"lying evidence: failed [instance enforcement]\n",
		"refused: evidence_mismatch: adapters: evidence fails instance, enforcement (assurance isolation_checked)\n",
		"remote provider claiming runner_enforced: refused: provider_invalid <- authority_exceeds_placement\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "RUNNER_ONLY_EXAMPLE") {
		t.Errorf("the Runner's environment reached the process:\n%s", out.String())
	}
	if strings.Count(out.String(), "=unenforced") != 9 {
		t.Errorf("the scratch provider must claim no enforcement on any of the nine axes:\n%s", out.String())
	}
}

// TestCopyableOutOfTheModule: the example imports no internal package, so
// it builds when copied into another module.
func TestCopyableOutOfTheModule(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no Go files: %v", err)
	}
	for _, name := range files {
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); strings.Contains("/"+p+"/", "/internal/") {
				t.Errorf("%s imports %s, which a copy outside the module cannot", name, p)
			}
		}
	}
}
