package proptest

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestCopyableOutOfTheModule: the example, tests included, imports no
// internal package, so it builds when copied into another module.
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
