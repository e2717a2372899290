package main

import (
	"bytes"
	"go/parser"
	"go/token"
	"strconv"
	"strings"
	"testing"
)

// TestRun runs the README's main job and checks what it shows.
func TestRun(t *testing.T) {
	var out bytes.Buffer
	if err := run(&out); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	for _, want := range []string{
		"-> allowed: 200",
		"-> refused: no_rule_matched",
		"-> refused: method_denied",
		"-> refused: header_denied",
		"-> refused: header_not_allowed",
		"-> refused: redirect_refused (target https://evil.example.com:443 would be: no_rule_matched)",
		"DNS queries for evil.example.com: 0",
		"-> 403 Checkfu-Refusal: destination_not_public",
		"requests that reached the private listener: 0",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

// TestCopyableOutOfTheModule: the README's example imports no internal
// package, so it builds when copied into another module.
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
