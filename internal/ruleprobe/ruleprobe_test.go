package ruleprobe_test

import (
	"go/parser"
	"go/token"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/checkfu/checkfu/internal/ruleprobe"
)

// TestCount checks that a count sees the decisions of its host alone,
// made while it runs, and that a second count cannot start beside it.
func TestCount(t *testing.T) {
	ruleprobe.Decided("api.example.com") // before: not counted
	n, stop := ruleprobe.Count("api.example.com")
	ruleprobe.Decided("api.example.com")
	ruleprobe.Decided("other.example.com")
	ruleprobe.Decided("api.example.com")
	func() {
		defer func() {
			if recover() == nil {
				t.Error("a second Count started while one runs")
			}
		}()
		ruleprobe.Count("api.example.com")
	}()
	stop()
	ruleprobe.Decided("api.example.com") // after: not counted
	if got := n(); got != 2 {
		t.Errorf("counted %d decisions, want 2", got)
	}
	// Stopped, another count can start.
	_, stop = ruleprobe.Count("x")
	stop()
}

// TestImportsOnlyAtomic holds the package to what lets the pure rule
// engine call it (egress/pure_test.go admits it): it imports sync/atomic
// and nothing else, so it can reach no network, file or caller's code.
func TestImportsOnlyAtomic(t *testing.T) {
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	checked := 0
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			if path, _ := strconv.Unquote(imp.Path.Value); path != "sync/atomic" {
				t.Errorf("%s imports %q; the pure rule engine calls this package, which may import sync/atomic alone", name, path)
			}
		}
		checked++
	}
	if checked == 0 {
		t.Fatal("no source file checked")
	}
}
