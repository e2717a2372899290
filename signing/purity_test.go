package signing

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestVerifierIsPure pins the package invariant that the verifier does no
// I/O: only load.go may import packages that reach files, processes or the
// network, here and in the strict JSON package it parses attester sets with.
func TestVerifierIsPure(t *testing.T) {
	io := map[string]bool{"os": true, "os/exec": true, "io/fs": true, "io/ioutil": true, "net": true, "net/http": true, "syscall": true, "log": true, "log/slog": true}
	checked := 0
	for _, dir := range []string{".", "../internal/strictjson"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") || filepath.Base(f) == "load.go" {
				continue
			}
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			af, err := parser.ParseFile(token.NewFileSet(), f, src, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			checked++
			for _, imp := range af.Imports {
				p, _ := strconv.Unquote(imp.Path.Value)
				if io[p] {
					t.Errorf("%s imports %q; I/O belongs in load.go", f, p)
				}
			}
		}
	}
	if checked < 8 {
		t.Fatalf("checked only %d files; did the layout change?", checked)
	}
}
