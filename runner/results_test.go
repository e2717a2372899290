package runner

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// resultLiterals returns the position of every string literal written
// as an event's Result (a Result: "..." member or an x.Result = "..."
// assignment) in the Go files fset parsed.
func resultLiterals(fset *token.FileSet, files []*ast.File) []string {
	var out []string
	isLit := func(e ast.Expr) bool {
		lit, ok := e.(*ast.BasicLit)
		return ok && lit.Kind == token.STRING
	}
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.KeyValueExpr:
				if k, ok := n.Key.(*ast.Ident); ok && k.Name == "Result" && isLit(n.Value) {
					out = append(out, fset.Position(n.Pos()).String())
				}
			case *ast.AssignStmt:
				for i, l := range n.Lhs {
					if sel, ok := l.(*ast.SelectorExpr); ok && sel.Sel.Name == "Result" && i < len(n.Rhs) && isLit(n.Rhs[i]) {
						out = append(out, fset.Position(n.Pos()).String())
					}
				}
			}
			return true
		})
	}
	return out
}

// TestResultsAreCodes holds the Runner's event results to codes.go: no
// file of the package writes a Result as a free string.
func TestResultsAreCodes(t *testing.T) {
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	if len(files) < 5 {
		t.Fatalf("parsed %d files; did the layout change?", len(files))
	}
	for _, at := range resultLiterals(fset, files) {
		t.Errorf("%s: a free-form Result; use a ResultCode from codes.go", at)
	}
}

// TestResultLiteralsFound proves the check can fail: both ways of
// writing a free Result are reported, a code is not.
func TestResultLiteralsFound(t *testing.T) {
	const src = `package p
func f() {
	_ = Event{Result: "refused_somewhere"}
	ev.Result = "refused"
	ev.Result = string(CodeRefused)
	_ = Event{Result: string(CodeRefusedPlane)}
}`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := resultLiterals(fset, []*ast.File{f}); len(got) != 2 {
		t.Errorf("resultLiterals found %v, want the two free strings", got)
	}
}
