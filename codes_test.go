package checkfu_test

import (
	"flag"
	"fmt"
	"go/ast"
	"go/constant"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/checkfu/checkfu/custody/custodytest"
)

var updateCodes = flag.Bool("update-codes", false, "rewrite docs/codes.md from the module's code constants")

// A codeDecl is one code constant of the module.
type codeDecl struct {
	pkg, name, value, typ, doc string
}

// isCodeType reports whether t is a code type: checkfu.Code, or a named
// string type of the module whose name ends in "Code" (such as
// egress.UpstreamCode).
func isCodeType(t types.Type) bool {
	n, ok := t.(*types.Named)
	if !ok || n.Obj().Pkg() == nil || !strings.HasPrefix(n.Obj().Pkg().Path(), module) {
		return false
	}
	b, ok := n.Underlying().(*types.Basic)
	return ok && b.Kind() == types.String && strings.HasSuffix(n.Obj().Name(), "Code")
}

// moduleCodes lists every exported code constant of every package of the
// module, from the compiler's export data (so no package escapes), with
// its doc comment from the source.
func moduleCodes(t *testing.T) []codeDecl {
	t.Helper()
	m, err := custodytest.LoadModule(".")
	if err != nil {
		t.Fatal(err)
	}
	var out []codeDecl
	for i, pkg := range m.Packages {
		path := m.ImportPaths[i]
		docs := constDocs(t, path)
		scope := pkg.Scope()
		for _, name := range scope.Names() {
			c, ok := scope.Lookup(name).(*types.Const)
			if !ok || !c.Exported() || !isCodeType(c.Type()) {
				continue
			}
			out = append(out, codeDecl{
				pkg: path, name: name, value: constant.StringVal(c.Val()),
				typ: types.TypeString(c.Type(), func(p *types.Package) string { return p.Name() }),
				doc: meaning(name, docs[name]),
			})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].value < out[j].value })
	// Document each re-exported internal code once, under its public name.
	public := map[string]bool{}
	for _, c := range out {
		if !strings.Contains(c.pkg, "/internal/") {
			public[c.value] = true
		}
	}
	kept := out[:0]
	for _, c := range out {
		if !strings.Contains(c.pkg, "/internal/") || !public[c.value] {
			kept = append(kept, c)
		}
	}
	return kept
}

// constDocs returns the first sentence of the doc comment of each
// constant declared in the non-test files of the package at importPath.
func constDocs(t *testing.T, importPath string) map[string]string {
	t.Helper()
	dir := "."
	if importPath != module {
		dir = strings.TrimPrefix(importPath, module+"/")
	}
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	docs := map[string]string{}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, s := range g.Specs {
				vs := s.(*ast.ValueSpec)
				text := vs.Doc.Text()
				if text == "" && len(g.Specs) == 1 {
					text = g.Doc.Text()
				}
				for _, n := range vs.Names {
					docs[n.Name] = firstSentence(text)
				}
			}
		}
	}
	return docs
}

// meaning drops the constant's own name from the front of its doc.
func meaning(name, doc string) string {
	for _, p := range []string{name + " is the code of the Refusal returned ", name + " is the code of a Refusal returned ", name + ": ", name + " means ", name + " "} {
		if rest, ok := strings.CutPrefix(doc, p); ok && rest != "" {
			return strings.ToUpper(rest[:1]) + rest[1:]
		}
	}
	return doc
}

func firstSentence(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if i := strings.Index(s, ". "); i >= 0 {
		s = s[:i+1]
	}
	return s
}

var codePattern = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// TestCodes holds every code of the module to one discipline: unique
// across the module (a Refusal matches on the string alone, so two
// packages' codes must never alias), snake_case, object_condition word
// order, no package prefix, documented, and listed in docs/codes.md.
func TestCodes(t *testing.T) {
	codes := moduleCodes(t)
	if len(codes) < 50 {
		t.Fatalf("found %d codes; the loader is missing packages", len(codes))
	}
	for _, err := range codeViolations(codes) {
		t.Error(err)
	}
	want := codesMarkdown(codes)
	if *updateCodes {
		if err := os.WriteFile(filepath.Join("docs", "codes.md"), []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(filepath.Join("docs", "codes.md"))
	if err != nil || string(got) != want {
		t.Errorf("docs/codes.md is out of date: run go test -run TestCodes -update-codes . (%v)", err)
	}
}

// codeViolations returns one error per broken rule.
func codeViolations(codes []codeDecl) []error {
	var errs []error
	byValue := map[string][]string{}
	for _, c := range codes {
		where := c.pkg + "." + c.name
		byValue[c.value] = append(byValue[c.value], where)
		if !codePattern.MatchString(c.value) {
			errs = append(errs, fmt.Errorf("%s = %q is not snake_case", where, c.value))
		}
		if strings.HasPrefix(c.value, "invalid_") || strings.HasPrefix(c.value, "unknown_") {
			errs = append(errs, fmt.Errorf("%s = %q: word order is object_condition (%q)", where, c.value, flip(c.value)))
		}
		for _, prefix := range []string{"custody_", "wire_", "egress_disabled_", "eventlog_", "acp_", "conformance_", "admission_", "adapters_"} {
			if strings.HasPrefix(c.value, prefix) {
				errs = append(errs, fmt.Errorf("%s = %q carries a package prefix", where, c.value))
			}
		}
		if c.doc == "" {
			errs = append(errs, fmt.Errorf("%s is undocumented", where))
		}
		if want := "Code" + camel(c.value); c.name != want && c.name != "Code"+camel(strings.TrimPrefix(c.value, pkgName(c.pkg)+"_")) {
			errs = append(errs, fmt.Errorf("%s = %q: name it %s", where, c.value, want))
		}
	}
	// A code an internal package declares and a public one re-exports
	// (const CodeX = wire.CodeX) is one code.
	for v, w := range byValue {
		var public []string
		for _, p := range w {
			if !strings.Contains(p, "/internal/") {
				public = append(public, p)
			}
		}
		if len(public) == 1 {
			byValue[v] = public
		}
	}
	values := make([]string, 0, len(byValue))
	for v := range byValue {
		values = append(values, v)
	}
	sort.Strings(values)
	for _, v := range values {
		if w := byValue[v]; len(w) > 1 {
			errs = append(errs, fmt.Errorf("code %q is declared %d times: %s", v, len(w), strings.Join(w, ", ")))
		}
	}
	return errs
}

// pkgName returns the last element of an import path.
func pkgName(path string) string { return path[strings.LastIndex(path, "/")+1:] }

func flip(v string) string {
	for _, p := range []string{"invalid_", "unknown_"} {
		if rest, ok := strings.CutPrefix(v, p); ok {
			return rest + "_" + strings.TrimSuffix(p, "_")
		}
	}
	return v
}

// camel turns "lease_expired" into "LeaseExpired", and spells the
// initialisms the module uses in upper case.
func camel(v string) string {
	var b strings.Builder
	for _, w := range strings.Split(v, "_") {
		switch w {
		case "dns", "acp", "mcp", "id", "utf8", "url", "http", "tls", "uid", "json", "ip", "tcp", "udp":
			b.WriteString(strings.ToUpper(w))
		default:
			if w != "" {
				b.WriteString(strings.ToUpper(w[:1]) + w[1:])
			}
		}
	}
	return b.String()
}

func codesMarkdown(codes []codeDecl) string {
	var b strings.Builder
	b.WriteString("# Refusal and failure codes\n\n")
	b.WriteString("Generated by `go test -run TestCodes -update-codes .` from the code constants of every\n")
	b.WriteString("package; TestCodes fails when this file and the code disagree. Every code is unique\n")
	b.WriteString("across the module and stable once published. `checkfu.Code` values are refusals\n")
	b.WriteString("(`errors.Is(err, code)` matches a `*checkfu.Refusal`); other code types name failures\n")
	b.WriteString("that are not refusals.\n\n")
	b.WriteString("| code | constant | type | meaning |\n| --- | --- | --- | --- |\n")
	for _, c := range codes {
		pkg := strings.TrimPrefix(strings.TrimPrefix(c.pkg, module), "/")
		if pkg == "" {
			pkg = "checkfu"
		}
		fmt.Fprintf(&b, "| `%s` | `%s.%s` | `%s` | %s |\n", c.value, pkg, c.name, c.typ, strings.ReplaceAll(c.doc, "|", `\|`))
	}
	return b.String()
}

// TestCodeViolationsCatch proves the checker reds on each rule.
func TestCodeViolationsCatch(t *testing.T) {
	bad := [][]codeDecl{
		{{pkg: "a", name: "CodeXInvalid", value: "x_invalid", doc: "d"}, {pkg: "b", name: "CodeXInvalid", value: "x_invalid", doc: "d"}},
		{{pkg: "a", name: "CodeInvalidX", value: "invalid_x", doc: "d"}},
		{{pkg: "a", name: "CodeUnknownX", value: "unknown_x", doc: "d"}},
		{{pkg: "a", name: "CodeCustodyX", value: "custody_x", doc: "d"}},
		{{pkg: "a", name: "CodeX", value: "X", doc: "d"}},
		{{pkg: "a", name: "CodeX", value: "x", doc: ""}},
		{{pkg: "a", name: "CodeY", value: "x", doc: "d"}},
		{{pkg: "m/internal/w", name: "CodeX", value: "x", doc: "d"}, {pkg: "m/a", name: "CodeX", value: "x", doc: "d"}, {pkg: "m/b", name: "CodeX", value: "x", doc: "d"}},
	}
	for i, codes := range bad {
		if len(codeViolations(codes)) == 0 {
			t.Errorf("case %d %+v: no violation", i, codes)
		}
	}
	if v := codeViolations([]codeDecl{
		{pkg: "a", name: "CodeDNSFailed", value: "dns_failed", doc: "d"},
		{pkg: "m/mount", name: "CodeNotFound", value: "mount_not_found", doc: "d"},
		{pkg: "m/internal/w", name: "CodeX", value: "x", doc: "d"}, {pkg: "m/a", name: "CodeX", value: "x", doc: "d"},
	}); len(v) != 0 {
		t.Errorf("a good code reported %v", v)
	}
}
