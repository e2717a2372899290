package checkfu_test

import (
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/checkfu/checkfu"

// An importRule forbids packages under from (module-relative; "." is the
// root package) from importing, directly or transitively, any package under
// one of banned.
type importRule struct {
	from   string
	banned []string
	why    string
}

// importRules carry the security law of the design card (README.md, "The
// packages"; docs/ARCHITECTURE.md) into the build.
var importRules = []importRule{
	{".", []string{"*"}, "checkfu.go is the shared vocabulary and imports nothing of the module"},
	{"acp", []string{"custody"}, "the process path never holds a plane credential"},
	{"adapters", []string{"custody"}, "a provider never holds a plane credential"},
	{"egress", []string{"custody", "adapters", "eventlog"}, "the egress engine stays below custody, providers and the log"},
	{"admission", []string{"custody", "adapters", "acp", "cmd", "examples"}, "admission is pure policy: no credential, provider or process code"},
	{"*lib*", []string{"cmd", "examples"}, "no library package imports cmd/ or examples/"},
	{"custody/authz", []string{"custody/internal/reveal"}, "the authorization plane can never read a Secret"},
	{"gateway", []string{"adapters", "acp", "admission", "cmd", "examples"}, "the gateway is plane authority: no provider, process or admission code"},
	{"runner", []string{"cmd", "examples"}, "the Runner is library code: examples and the CLI build on it, never the reverse"},
	{"gateway/modelroute", []string{"custody", "adapters", "acp", "admission", "runner", "eventlog"}, "the model route's pure parts read requests and streams and hold no key"},
	{"gateway/door", []string{"custody", "gateway/broker", "egress", "eventlog", "adapters", "acp", "admission", "runner"}, "the door runs inside the sandbox: it holds nothing of the plane and relays bytes only"},
	{"adapters/jail/internal/initstage", []string{"*"}, "a jail's init stage stays a small program: it imports nothing of the module"},
}

// A notDirectRule forbids packages under from to import any package under
// one of banned directly; reaching it through another package is allowed.
type notDirectRule struct {
	from   string
	banned []string
	why    string
}

// notDirectRules keep the gateway away from the Secret: it reaches a
// credential only through custody/edge, which attaches it.
var notDirectRules = []notDirectRule{
	{"gateway", []string{"custody"}, "the gateway holds no credential; only custody/edge, below it, attaches one"},
	{"runner", []string{"custody/internal/reveal"}, "the Runner hands custody's Custodian to custody/edge and never reads a Secret itself"},
}

// An exceptRule is an importRule that does not apply to the packages
// under one of except.
type exceptRule struct {
	importRule
	except []string
}

// exceptRules are the rules with named exceptions.
var exceptRules = []exceptRule{
	{importRule{"eventlog", []string{"custody"}, "the event log stores what it is given; only the evidence bridge knows custody"}, []string{"eventlog/evidencelog"}},
}

// A directRule lets only the packages in allowed import pkg directly.
type directRule struct {
	pkg     string
	allowed []string
	why     string
}

// directRules name the only direct importers of a package.
var directRules = []directRule{
	{"custody/internal/reveal", []string{"custody", "custody/edge", "custody/custodytest"},
		"only the custody boundary, its outbound edge and the runtime conformance suite read a Secret's bytes"},
	{"custody/internal/outbound", []string{"custody/pipeline", "custody/edge"},
		"only the call pipeline makes an authorized call, and only the outbound edge takes one"},
}

// under reports whether the module-relative package p is dir or below it.
func under(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, dir+"/")
}

func isLibrary(p string) bool {
	return !under(p, "cmd") && !under(p, "examples") && !under(p, "bench")
}

// violations returns one line per forbidden import path in graph, which
// maps module-relative packages to the module-relative packages they import.
func violations(graph map[string][]string) []string {
	var out []string
	rules := make([]exceptRule, 0, len(importRules)+len(exceptRules))
	for _, r := range importRules {
		rules = append(rules, exceptRule{importRule: r})
	}
	rules = append(rules, exceptRules...)
	for _, r := range rules {
		for from := range graph {
			if slices.ContainsFunc(r.except, func(e string) bool { return under(from, e) }) {
				continue
			}
			switch {
			case r.from == "*lib*":
				if !isLibrary(from) {
					continue
				}
			case r.from == ".":
				if from != "." {
					continue
				}
			case !under(from, r.from):
				continue
			}
			for dep := range closure(graph, from) {
				for _, b := range r.banned {
					if (b == "*" && dep != from) || (b != "*" && under(dep, b)) {
						out = append(out, from+" imports "+dep+": "+r.why)
					}
				}
			}
		}
	}
	for _, r := range directRules {
		for from, deps := range graph {
			if slices.Contains(r.allowed, from) {
				continue
			}
			for _, dep := range deps {
				if under(dep, r.pkg) {
					out = append(out, from+" imports "+dep+" directly: "+r.why)
				}
			}
		}
	}
	for _, r := range notDirectRules {
		for from, deps := range graph {
			if !under(from, r.from) || under(from, r.from+"/internal") {
				continue
			}
			for _, dep := range deps {
				for _, b := range r.banned {
					if dep == b || (under(dep, b) && !under(dep, b+"/authz") && !under(dep, b+"/edge") && !under(dep, b+"/address") && !under(dep, b+"/pipeline")) {
						out = append(out, from+" imports "+dep+" directly: "+r.why)
					}
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

// closure returns every module package reachable from p, p excluded.
func closure(graph map[string][]string, p string) map[string]bool {
	seen := map[string]bool{}
	var walk func(string)
	walk = func(q string) {
		for _, d := range graph[q] {
			if !seen[d] {
				seen[d] = true
				walk(d)
			}
		}
	}
	walk(p)
	delete(seen, p)
	return seen
}

// moduleGraph reads the non-test imports of every package in the module.
func moduleGraph(t *testing.T) map[string][]string {
	t.Helper()
	graph := map[string][]string{}
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if p != "." && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "node_modules") {
			return filepath.SkipDir
		}
		pkg, err := build.ImportDir(p, 0)
		if err != nil {
			if _, ok := err.(*build.NoGoError); ok {
				return nil
			}
			return err
		}
		rel := filepath.ToSlash(p)
		graph[rel] = nil
		for _, imp := range pkg.Imports {
			if imp == module {
				graph[rel] = append(graph[rel], ".")
			} else if strings.HasPrefix(imp, module+"/") {
				graph[rel] = append(graph[rel], strings.TrimPrefix(imp, module+"/"))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return graph
}

func TestImportRules(t *testing.T) {
	graph := moduleGraph(t)
	if _, ok := graph["."]; !ok {
		t.Fatal("root package not found; run the test from the module root")
	}
	for _, v := range violations(graph) {
		t.Error(v)
	}
}

// TestImportRulesCatchViolations proves the checker itself reds: each
// synthetic graph breaks one rule, directly or through an intermediate.
func TestImportRulesCatchViolations(t *testing.T) {
	bad := []map[string][]string{
		{".": {"egress"}, "egress": nil},
		{"acp": {"custody"}, "custody": nil},
		{"acp/wire": {"internal/x"}, "internal/x": {"custody/store"}, "custody/store": nil},
		{"adapters/docker": {"custody"}, "custody": nil},
		{"egress": {"eventlog"}, "eventlog": nil},
		{"egress": {"adapters"}, "adapters": nil},
		{"egress/egresstest": {"custody"}, "custody": nil},
		{"conformance": {"cmd/checkfu"}, "cmd/checkfu": nil},
		{"eventlog": {"examples/guard"}, "examples/guard": nil},
		{"custody/authz": {"custody/internal/reveal"}, "custody/internal/reveal": nil},
		{"custody/authz": {"custody/address"}, "custody/address": {"custody"}, "custody": {"custody/internal/reveal"}, "custody/internal/reveal": nil},
		{"custody/mount": {"custody/internal/reveal"}, "custody/internal/reveal": nil},
		{"custody/pgstore": {"custody/internal/reveal"}, "custody/internal/reveal": nil},
		{"eventlog": {"custody/authz"}, "custody/authz": nil},
		{"eventlog/pglog": {"internal/x"}, "internal/x": {"custody"}, "custody": nil},
		{"eventlog/evidencelogx": {"custody/authz"}, "custody/authz": nil},
		{"gateway": {"custody"}, "custody": nil},
		{"gateway/broker": {"custody/internal/reveal"}, "custody/internal/reveal": nil},
		{"gateway/broker": {"adapters/docker"}, "adapters/docker": nil},
		{"gateway": {"internal/x"}, "internal/x": {"acp"}, "acp": nil},
	}
	for i, g := range bad {
		if len(violations(g)) == 0 {
			t.Errorf("graph %d %v: no violation reported", i, g)
		}
	}
	good := map[string][]string{
		".": nil, "egress": {"."}, "custody": {"custody/internal/reveal", "."}, "cmd/checkfu": {"custody", "egress", "acp"},
		"acp": {"."}, "examples/guard": {"egress"}, "eventlog": {"."},
		"custody/address": {"."}, "custody/authz": {"custody/address", "."},
		"custody/edge":         {"custody", "custody/authz", "custody/internal/reveal", "egress"},
		"custody/custodytest":  {"custody", "custody/authz", "custody/internal/reveal"},
		"eventlog/evidencelog": {"eventlog", "custody/authz"}, "custody/mount": {"custody", "custody/authz"},
		"gateway": {"custody/authz", "custody/edge", "custody/address", "egress", "."}, "gateway/broker": {"gateway", "custody/authz", "egress", "."},
		"gateway/internal/rigtest": {"custody", "custody/edge", "gateway"},
	}
	if v := violations(good); len(v) != 0 {
		t.Errorf("allowed graph reported %v", v)
	}
}

// adapters: evidence matching is pure. The files of package adapters
// that declare MatchEvidence, or anything it calls in the same file,
// import no package that reaches files, processes, the network, the
// clock or randomness.
func TestEvidenceMatchingIsPure(t *testing.T) {
	impure := map[string]bool{"os": true, "os/exec": true, "io/fs": true, "io/ioutil": true, "net": true, "net/http": true,
		"syscall": true, "log": true, "log/slog": true, "time": true, "math/rand": true, "math/rand/v2": true, "crypto/rand": true,
		"github.com/checkfu/checkfu/acp/wire": true}
	files, err := filepath.Glob(filepath.Join("adapters", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(token.NewFileSet(), f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		holds := false
		for _, d := range af.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && fd.Name.Name == "MatchEvidence" {
				holds = true
			}
		}
		if !holds {
			continue
		}
		found++
		for _, imp := range af.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); impure[p] {
				t.Errorf("%s holds MatchEvidence and imports %q; evidence matching must be pure", f, p)
			}
		}
	}
	if found != 1 {
		t.Fatalf("found MatchEvidence in %d files of adapters; did the layout change?", found)
	}
}

// layers is the declared layer order of the module, lowest first: a
// package may import packages of its own layer or below, never above.
// A package's layer is that of the longest prefix listed (a prefix is a
// module-relative directory; "." is the root package). docs/ARCHITECTURE.md
// draws the same order.
var layers = [][]string{
	{"."},                         // the shared vocabulary
	{"internal", "signing"},       // primitives: strict JSON, quoting, keys and envelopes
	{"egress", "acp", "eventlog"}, // the egress engine, the process wire, the log
	// receipts, credentials and policy; custody's evidence into the log;
	// the model route's pure parts, with which custody's pipeline checks
	// an agent's model calls
	{"conformance", "custody", "admission", "internal/memevidence", "eventlog/evidencelog", "gateway/modelroute"},
	{"gateway", "adapters"},          // plane authority and providers
	{"runner", "conformance/matrix"}, // what wires the plane together
	{"cmd", "examples", "bench", "quickstart"},
}

// A layerException is one named upward edge the layer order allows.
type layerException struct {
	from, to string // module-relative packages
	why      string
}

// layerExceptions are the upward edges the module still has, each with
// its reason. An exception that no longer occurs fails the test, so the
// list only shrinks.
// (There is none today: the evidence bridge, eventlog/evidencelog, the one
// place custody's evidence becomes an eventlog.Event, is declared in the
// layer of custody, which it imports, above the log it writes to.)
var layerExceptions []layerException

// layerOf returns the index in layers of p's longest listed prefix.
func layerOf(p string) int {
	best, bestLen := -1, -1
	for i, l := range layers {
		for _, prefix := range l {
			if (under(p, prefix) || prefix == "." && p == ".") && len(prefix) > bestLen {
				best, bestLen = i, len(prefix)
			}
		}
	}
	return best
}

// upwardEdges returns one line per direct import in graph that points to a
// higher layer and is not a named exception, one per package without a
// layer, one per non-test package importing a *test package, and one per
// exception that does not occur.
func upwardEdges(graph map[string][]string) []string {
	var out []string
	used := map[layerException]bool{}
	for from, deps := range graph {
		lf := layerOf(from)
		if lf < 0 {
			out = append(out, from+" is in no layer")
			continue
		}
		for _, dep := range deps {
			excepted := false
			for _, e := range layerExceptions {
				if e.from == from && e.to == dep {
					excepted, used[e] = true, true
				}
			}
			if ld := layerOf(dep); ld > lf && !excepted {
				out = append(out, from+" imports "+dep+": an upward edge (layer "+layers[lf][0]+" below "+layers[ld][0]+")")
			}
			if isTestPackage(dep) && !isTestPackage(from) && layerOf(from) < len(layers)-1 {
				out = append(out, from+" is not test code but imports the test package "+dep)
			}
		}
	}
	for _, e := range layerExceptions {
		if _, ok := graph[e.from]; ok && !used[e] {
			out = append(out, "exception "+e.from+" -> "+e.to+" no longer occurs: delete it")
		}
	}
	sort.Strings(out)
	return out
}

// isTestPackage reports whether p is a test helper package or lies under
// one: an element of its path ends in "test" (custodytest, dnstest,
// rigtest, adaptertest/probe, ...).
func isTestPackage(p string) bool {
	for _, e := range strings.Split(p, "/") {
		if strings.HasSuffix(e, "test") {
			return true
		}
	}
	return false
}

func TestLayerOrder(t *testing.T) {
	for _, v := range upwardEdges(moduleGraph(t)) {
		t.Error(v)
	}
}

// TestLayerOrderCatchesUpwardEdges proves the checker reds on each kind
// of fault, and stays green on a graph that keeps the order.
func TestLayerOrderCatchesUpwardEdges(t *testing.T) {
	bad := []map[string][]string{
		{"signing": {"conformance"}, "conformance": nil},
		{"acp/wire": {"conformance"}, "conformance": nil, "eventlog/evidencelog": {"custody/authz"}, "custody/authz": nil},
		{"eventlog": {"custody"}, "custody": nil},
		{"custody/edge": {"gateway"}, "gateway": nil},
		{"conformance/matrix": {"custody/custodytest"}, "custody/custodytest": nil},
		{"gateway": {"runner"}, "runner": nil},
		{"runner": {"cmd/checkfu"}, "cmd/checkfu": nil},
		{"nowhere": nil},
		{"eventlog": {"eventlog/evidencelog"}, "eventlog/evidencelog": nil},
	}
	for i, g := range bad {
		if len(upwardEdges(g)) == 0 {
			t.Errorf("graph %d %v: no violation reported", i, g)
		}
	}
	good := map[string][]string{
		".": nil, "signing": {".", "internal/strictjson"}, "internal/strictjson": {"."}, "internal/telemetry": {"."},
		"conformance": {"signing"}, "acp/wire": {"signing"}, "eventlog": {"signing"},
		"eventlog/evidencelog": {"eventlog", "custody/authz"}, "custody/authz": {"."},
		"conformance/matrix": {"gateway", "adapters/docker", "internal/memevidence"}, "gateway": {"custody/authz"},
		"adapters/docker": {"admission"}, "admission": {"conformance"}, "internal/memevidence": {"custody/authz"},
		"custody/custodytest": {"custody/authz"}, "cmd/checkfu": {"runner", "custody/custodytest"}, "runner": {"gateway"},
	}
	if v := upwardEdges(good); len(v) != 0 {
		t.Errorf("a graph that keeps the order reported %v", v)
	}
	// A named exception allows its edge, and fails once it no longer
	// occurs.
	defer func(old []layerException) { layerExceptions = old }(layerExceptions)
	layerExceptions = []layerException{{"eventlog", "custody/authz", "a test exception"}}
	if v := upwardEdges(map[string][]string{"eventlog": {"custody/authz"}, "custody/authz": nil}); len(v) != 0 {
		t.Errorf("an excepted edge reported %v", v)
	}
	if v := upwardEdges(map[string][]string{"eventlog": nil}); len(v) != 1 {
		t.Errorf("an exception that no longer occurs reported %v, want one line", v)
	}
}
