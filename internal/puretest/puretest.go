package puretest

import (
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// IO lists the import paths a pure package's files may not import: the
// packages that reach files, processes, the network or a log.
var IO = []string{"os", "os/exec", "io/fs", "io/ioutil", "net", "net/http", "syscall", "log", "log/slog"}

// Impure returns one line per import of a package in [IO] by a non-test Go
// file of dirs whose base name is not in except, and how many files it read.
func Impure(dirs []string, except ...string) (found []string, read int, err error) {
	for _, dir := range dirs {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			return nil, read, err
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") || slices.Contains(except, filepath.Base(f)) {
				continue
			}
			src, err := os.ReadFile(f)
			if err != nil {
				return nil, read, err
			}
			af, err := parser.ParseFile(token.NewFileSet(), f, src, parser.ImportsOnly)
			if err != nil {
				return nil, read, err
			}
			read++
			for _, imp := range af.Imports {
				if p, _ := strconv.Unquote(imp.Path.Value); slices.Contains(IO, p) {
					found = append(found, fmt.Sprintf("%s imports %q", filepath.ToSlash(f), p))
				}
			}
		}
	}
	return found, read, nil
}

// Check fails t for each import [Impure] finds in dirs, and if it reads
// fewer than atLeast files. except names the files (base names) that may
// do I/O, such as a package's load.go.
func Check(t testing.TB, dirs []string, atLeast int, except ...string) {
	t.Helper()
	found, read, err := Impure(dirs, except...)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range found {
		t.Errorf("%s; I/O belongs in %v", f, except)
	}
	if read < atLeast {
		t.Fatalf("checked only %d files of %v, want at least %d; did the layout change?", read, dirs, atLeast)
	}
}
