package adapters_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// TestProvidersExportNoVariable: the provider packages whose Describe
// the library reads to grade a provider export no package variable, so
// no package in the binary can rewrite what an adapter reports (its
// identity, gaps or platform). What they export is a constant, or a
// function returning a value (a struct value is a copy: a caller that
// changes it changes only its own). A source scan, not a mutant: a
// mutant built through an overlay is invisible to it, and a function
// returning a struct value has no shared state a mutant could hand out.
func TestProvidersExportNoVariable(t *testing.T) {
	checked := 0
	for _, dir := range []string{"daytona", "e2b", "vercel", "process", "jail", "docker"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range files {
			if strings.HasSuffix(path, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			checked++
			for _, d := range f.Decls {
				g, ok := d.(*ast.GenDecl)
				if !ok || g.Tok != token.VAR {
					continue
				}
				for _, s := range g.Specs {
					for _, n := range s.(*ast.ValueSpec).Names {
						if n.IsExported() {
							t.Errorf("%s: exported variable %s: any package can rewrite it; make it a constant or a function", path, n.Name)
						}
					}
				}
			}
		}
	}
	if checked < 20 {
		t.Fatalf("only %d files were checked; the scan is broken", checked)
	}
}
