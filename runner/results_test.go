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
// as an event's Result in the Go files fset parsed: a Result: "..."
// member, an x.Result = "..." assignment, a non-empty literal passed
// where a function of the files takes a ResultCode (a literal converts
// to it silently), and a ResultCode("...") conversion outside codes.go.
func resultLiterals(fset *token.FileSet, files []*ast.File) []string {
	var out []string
	isLit := func(e ast.Expr) bool {
		lit, ok := e.(*ast.BasicLit)
		return ok && lit.Kind == token.STRING
	}
	// takes[name] lists the parameter positions of type ResultCode of
	// each function and method the files declare.
	takes := map[string][]int{}
	for _, f := range files {
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok {
				continue
			}
			i := 0
			for _, field := range fn.Type.Params.List {
				n := max(len(field.Names), 1)
				if id, ok := field.Type.(*ast.Ident); ok && id.Name == "ResultCode" {
					for j := range n {
						takes[fn.Name.Name] = append(takes[fn.Name.Name], i+j)
					}
				}
				i += n
			}
		}
	}
	for _, f := range files {
		codes := filepath.Base(fset.Position(f.Pos()).Filename) == "codes.go"
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
			case *ast.CallExpr:
				var name string
				switch fun := n.Fun.(type) {
				case *ast.Ident:
					name = fun.Name
				case *ast.SelectorExpr:
					name = fun.Sel.Name
				}
				if name == "ResultCode" && !codes && len(n.Args) == 1 && isLit(n.Args[0]) {
					out = append(out, fset.Position(n.Pos()).String())
				}
				for _, i := range takes[name] {
					if i < len(n.Args) && isLit(n.Args[i]) && n.Args[i].(*ast.BasicLit).Value != `""` {
						out = append(out, fset.Position(n.Args[i].Pos()).String())
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
	exited(ctx, "killed")
	a.exited(ctx, CodeKilled)
	s.decide(ctx, ev, err, "")
	_ = ResultCode("exit_1")
}
func exited(ctx context.Context, result ResultCode) {}
func (s *Session) decide(ctx context.Context, ev Event, err error, ok ResultCode) {}`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := resultLiterals(fset, []*ast.File{f}); len(got) != 4 {
		t.Errorf("resultLiterals found %v, want the four free strings", got)
	}
}
