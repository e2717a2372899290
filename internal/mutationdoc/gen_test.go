package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// TestDocIsCurrent fails when docs/mutation.md is not what the mutant
// tables say: run "go run ./internal/mutationdoc -w" and commit.
func TestDocIsCurrent(t *testing.T) {
	want, err := Generate("../..")
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("../../docs/mutation.md")
	if err != nil {
		t.Fatalf("%v (generate it with go run ./internal/mutationdoc -w)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("docs/mutation.md is out of date; run go run ./internal/mutationdoc -w")
	}
}

// TestScanFindsEveryTable pins that the scanner sees each kind of table:
// a package's mutation.Mutant list, egress's positional tables and the
// matrix's guard mutants. A scanner that silently found none would keep
// an empty document current.
func TestScanFindsEveryTable(t *testing.T) {
	entries, err := scan("../..")
	if err != nil {
		t.Fatal(err)
	}
	pkgs := map[string]int{}
	for _, e := range entries {
		pkgs[e.Pkg]++
		if e.Kills == "" || e.File == "" && !strings.Contains(e.Name, "(generated)") {
			t.Errorf("%s: mutant %q lacks a file or a killing test", e.Pkg, e.Name)
		}
	}
	for _, p := range []string{".", "egress", "conformance", "conformance/matrix", "adapters/docker", "custody"} {
		if pkgs[p] == 0 {
			t.Errorf("no mutants found in %s", p)
		}
	}
	if len(entries) < 100 {
		t.Errorf("found %d mutants; the module lists far more", len(entries))
	}
}
