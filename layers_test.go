package checkfu_test

import (
	"sort"
	"strings"
	"testing"
)

// layers is the declared layer order of the module, lowest first: a
// package may import packages of its own layer or below, never above.
// A package's layer is that of the longest prefix listed (a prefix is a
// module-relative directory; "." is the root package). docs/ARCHITECTURE.md
// draws the same order.
var layers = [][]string{
	{"."},                         // the shared vocabulary
	{"internal", "signing"},       // primitives: strict JSON, quoting, keys and envelopes
	{"egress", "acp", "eventlog"}, // the egress engine, the process wire, the log
	{"conformance", "custody", "admission", "internal/memevidence"}, // receipts, credentials and policy
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
var layerExceptions = []layerException{
	{"eventlog/evidencelog", "custody/authz", "bridges custody's evidence schema into the event log; the one-event-vocabulary work folds it into one place"},
}

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
		{"eventlog/evidencelog": {"eventlog"}, "eventlog": nil},
	}
	for i, g := range bad {
		if len(upwardEdges(g)) == 0 {
			t.Errorf("graph %d %v: no violation reported", i, g)
		}
	}
	good := map[string][]string{
		".": nil, "signing": {".", "internal/strictjson"}, "internal/strictjson": {"."},
		"conformance": {"signing"}, "acp/wire": {"signing"}, "eventlog": {"signing"},
		"eventlog/evidencelog": {"eventlog", "custody/authz"}, "custody/authz": {"."},
		"conformance/matrix": {"gateway", "adapters/docker", "internal/memevidence"}, "gateway": {"custody/authz"},
		"adapters/docker": {"admission"}, "admission": {"conformance"}, "internal/memevidence": {"custody/authz"},
		"custody/custodytest": {"custody/authz"}, "cmd/checkfu": {"runner", "custody/custodytest"}, "runner": {"gateway"},
	}
	if v := upwardEdges(good); len(v) != 0 {
		t.Errorf("a graph that keeps the order reported %v", v)
	}
}
