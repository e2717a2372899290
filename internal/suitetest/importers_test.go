package suitetest

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// internalSuites names the internal packages that are suites too, each
// with the reason it may import the recorder, and only from its test
// files: to prove that it rejects a broken implementation.
var internalSuites = map[string]string{
	"internal/copytest": "Fresh is the module's copy-per-call suite; its test proves it rejects a getter that hands out its table",
}

// TestOnlySuitesImport keeps the recorder where it belongs: only the
// module's exported conformance suites (directories named *test outside
// internal/), the internal suites named in internalSuites, and this
// package may import it.
func TestOnlySuitesImport(t *testing.T) {
	const self = "github.com/checkfu/checkfu/internal/suitetest"
	root := filepath.Join("..", "..")
	seen := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); p != self {
				continue
			}
			seen++
			dir, _ := filepath.Rel(root, filepath.Dir(path))
			dir = filepath.ToSlash(dir)
			if _, named := internalSuites[dir]; named && strings.HasSuffix(path, "_test.go") {
				continue
			}
			if dir != "internal/suitetest" && (!strings.HasSuffix(dir, "test") || strings.HasPrefix(dir, "internal/")) {
				t.Errorf("%s imports internal/suitetest; only the exported suites (*test packages) may", path)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen == 0 {
		t.Fatal("no importer of internal/suitetest found: the walk is looking in the wrong place")
	}
}
