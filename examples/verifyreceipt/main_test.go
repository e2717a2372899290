package main

import (
	"bytes"
	"go/parser"
	"go/token"
	"strconv"
	"strings"
	"testing"
)

// TestRun runs the example and checks every verdict it prints.
func TestRun(t *testing.T) {
	var out bytes.Buffer
	if err := run(&out); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	for _, want := range []string{
		"verified: example-throwaway signed exact_destination_match,redirect_recheck,connect_time_public_address,authority_separation,default_deny for example:provider-a@1, label mock\n",
		"certifies example:provider-a@1: refused: label_not_production\n",
		"advertising security_boundary: advisory_filter\n",
		"tampered payload (provider-a -> provider-b): refused: signature_invalid\n",
		"signed by a key outside the set: refused: attester_unknown\n",
		"genuine receipt against the built-in (empty) set: refused: attester_unknown\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

// TestCopyableOutOfTheModule: the example imports no internal package, so
// it builds when copied into another module.
func TestCopyableOutOfTheModule(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "main.go", nil, parser.ImportsOnly)
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); strings.Contains("/"+p+"/", "/internal/") {
			t.Errorf("main.go imports %s, which a copy outside the module cannot", p)
		}
	}
}
