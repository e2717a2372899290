package vendortest

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestOnlyTestsImport: no production file of the module imports this
// package, and kin-openapi is imported only from _test.go files or from
// this package, so it never reaches a production binary.
func TestOnlyTestsImport(t *testing.T) {
	const self = "github.com/checkfu/checkfu/adapters/internal/vendortest"
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	here, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		checked++
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			switch {
			case p == self:
				t.Errorf("%s, a production file, imports %s", path, self)
			case strings.HasPrefix(p, "github.com/getkin/kin-openapi") && filepath.Dir(path) != here:
				t.Errorf("%s, a production file, imports %s", path, p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Fatalf("only %d production files were checked; the walk is broken", checked)
	}
}
