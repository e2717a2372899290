package egress

import (
	"context"
	"embed"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// ioFiles are the only non-test files of the package that may do I/O:
// the network half (dialling, the credentialed client, the guard, its
// forwarder and its gauges). Every other non-test file is checked by TestEngineIsPure, so
// a new file is pure unless it is added here.
var ioFiles = map[string]bool{
	"client.go": true, "dial.go": true, "forward.go": true, "guard.go": true,
	"quiet_unix.go": true, "quiet_other.go": true, "nofile_unix.go": true, "nofile_other.go": true,
	"guard_metrics.go": true,
}

// packageSource is every Go file of the package, embedded so that the
// test reads exactly the source the binary was built from (a mutant built
// with -overlay included).
//
//go:embed *.go
var packageSource embed.FS

// engineImports are the only packages the pure files may import. None of
// them can reach the network or the file system on the engine's behalf,
// except net/http, which is limited to engineHTTPNames below, and the
// JSON Schema compiler, which is given its one schema from memory.
// internal/ruleprobe, which Decide tells of each decision for the
// module's tests, imports sync/atomic alone and runs no caller's code
// (its TestImportsOnlyAtomic).
var engineImports = map[string]bool{
	"bytes": true, "embed": true, "math/bits": true, "encoding/json": true, "errors": true, "fmt": true, "io": true,
	"net/http": true, "net/netip": true, "net/url": true, "regexp": true, "slices": true, "strconv": true,
	"strings": true, "sync": true, "sync/atomic": true, "unicode/utf8": true,
	"github.com/checkfu/checkfu":                     true,
	"github.com/checkfu/checkfu/internal/ruleprobe":  true,
	"github.com/checkfu/checkfu/internal/strictjson": true,
	"github.com/santhosh-tekuri/jsonschema/v5":       true,
	"golang.org/x/net/http/httpguts":                 true,
	"golang.org/x/net/idna":                          true,
	"golang.org/x/net/publicsuffix":                  true,
}

// engineHTTPNames are the net/http names the rule engine may use: types,
// constants and a pure string function, never a client, transport or
// dialer.
var engineHTTPNames = map[string]bool{
	"Header": true, "Request": true, "CanonicalHeaderKey": true,
	"MethodGet": true, "MethodConnect": true, "MethodTrace": true,
}

// TestEngineIsPure is the structural proof that matching happens before
// any DNS lookup: the rule engine (and every other file outside ioFiles:
// addresses, policy, presets, ...) cannot look anything up, because it
// imports nothing that resolves or dials.
func TestEngineIsPure(t *testing.T) {
	fset := token.NewFileSet()
	entries, err := packageSource.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	checked, exempt := 0, 0
	for _, e := range entries {
		name := e.Name()
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		if ioFiles[name] {
			exempt++
			continue
		}
		checked++
		src, err := packageSource.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		httpName := ""
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if !engineImports[path] {
				t.Errorf("%s imports %q, which the pure rule engine may not use", name, path)
			}
			if path == "net/http" {
				httpName = "http"
				if imp.Name != nil {
					httpName = imp.Name.Name
				}
			}
		}
		if httpName == "" {
			continue
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if id, ok := sel.X.(*ast.Ident); ok && id.Name == httpName && !engineHTTPNames[sel.Sel.Name] {
				t.Errorf("%s: uses http.%s, which the pure rule engine may not use", fset.Position(sel.Pos()), sel.Sel.Name)
			}
			return true
		})
	}
	if exempt != len(ioFiles) {
		t.Errorf("found %d of the %d I/O files; remove the ones that are gone from ioFiles", exempt, len(ioFiles))
	}
	if checked < 10 {
		t.Fatalf("checked only %d files; did the layout change?", checked)
	}
}

// TestDecideDoesNoLookup is the behavioural half: with the default
// resolver replaced by one that fails the test when it is asked anything,
// Decide refuses and allows without consulting it. The swap of the global
// resolver happens in a child process (this test binary, re-run), so that
// no other test's goroutine can see it.
func TestDecideDoesNoLookup(t *testing.T) {
	if os.Getenv("CHECKFU_EGRESS_PURITY_CHILD") != "1" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestDecideDoesNoLookup$", "-test.count=1")
		cmd.Env = append(os.Environ(), "CHECKFU_EGRESS_PURITY_CHILD=1")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "PASS") {
			t.Fatalf("child: %v\n%s", err, out)
		}
		return
	}
	old := net.DefaultResolver
	t.Cleanup(func() { net.DefaultResolver = old })
	net.DefaultResolver = &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, address string) (net.Conn, error) {
		t.Errorf("Decide made a DNS query (%s %s)", network, address)
		return nil, errors.New("no DNS in the rule engine")
	}}
	rs := mustRules(t, `[{"host":"allowed.checkfu-test.example","port":443,"methods":["GET"]}]`)
	for _, u := range []string{"https://allowed.checkfu-test.example/", "https://denied.checkfu-test.example/"} {
		req := mustRequest(t, "GET", u)
		d, err := rs.Decide(req)
		if d.Allowed() != strings.Contains(u, "allowed") {
			t.Errorf("Decide(%s) = %v, %v", u, d, err)
		}
	}
}
