package egress

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// A mutant deletes or inverts one security check of the rule engine. Each
// must compile and must make the named test fail; TestMutants builds every
// mutant with `go test -overlay`, so the working tree is never touched.
type mutant struct {
	name  string
	file  string
	edits [][2]string // old, new; each old must occur exactly once
	kills string      // the test that must go red
}

var mutants = []mutant{
	{"header denylist in Decide", "decide.go",
		[][2]string{{"if canonicalHeaderDenied(k) {", "if false && canonicalHeaderDenied(k) {"}}, "TestDenylistWinsInDecide"},
	{"header denylist at parse time", "rules.go",
		[][2]string{{"if canonicalHeaderDenied(k) {", "if false && canonicalHeaderDenied(k) {"}}, "TestParseRulesRefuses"},
	{"underscore aliases", "headers.go",
		[][2]string{{"if strings.IndexByte(name, '_') >= 0 {", "if false {"}}, "TestHeaderDenied"},
	{"X-Forwarded-* prefix", "headers.go",
		[][2]string{{`"X-Forwarded-",`, ``}}, "TestHeaderDenied"},
	{"default-deny header allowlist", "decide.go",
		[][2]string{{"if listing&(1<<i) == 0 {", "if false && listing&(1<<i) == 0 {"}}, "TestDecide"},
	{"method check", "decide.go",
		[][2]string{{"if !contains(r.methods, req.Method) {", "if false {"}}, "TestDecide"},
	{"rule matched before DNS", "decide.go",
		[][2]string{
			{"import (\n", "import (\n\t\"context\"\n\t\"net\"\n"},
			{"if err := checkRequestShape(req); err != nil {", "net.DefaultResolver.LookupHost(context.Background(), req.Host)\n\tif err := checkRequestShape(req); err != nil {"},
		}, "TestEngineIsPure"},
	{"rule matched before DNS (behavioural)", "decide.go",
		[][2]string{
			{"import (\n", "import (\n\t\"context\"\n\t\"net\"\n"},
			{"if err := checkRequestShape(req); err != nil {", "net.DefaultResolver.LookupHost(context.Background(), req.Host)\n\tif err := checkRequestShape(req); err != nil {"},
		}, "TestDecideDoesNoLookup"},
	{"request shape re-check in Decide", "decide.go",
		[][2]string{{"if err := checkRequestShape(req); err != nil {", "if err := checkRequestShape(req); false && err != nil {"}}, "TestDecideRefusesHandBuilt"},
	{"wildcard never matches the apex", "decide.go",
		[][2]string{{"hosts := rs.exact[req.Host]", "hosts := rs.exact[req.Host] | rs.wild[req.Host]"}}, "TestDecide"},
	{"wildcard matches one label", "decide.go",
		[][2]string{{"if i := strings.IndexByte(req.Host, '.'); i >= 0 {", "for i := range len(req.Host) {\n\t\t\tif req.Host[i] != '.' {\n\t\t\t\tcontinue\n\t\t\t}"}}, "TestDecide"},
	{"denylist map lookup", "headers.go",
		[][2]string{{"if maybeDenied(name) {", "if false && maybeDenied(name) {"}}, "TestHeaderDenied"},
	{"public-suffix wildcard", "rules.go",
		[][2]string{{"if ps, _ := publicsuffix.PublicSuffix(h); ps == h {", "if ps, _ := publicsuffix.PublicSuffix(h); false && ps == h {"}}, "TestParseRulesRefuses"},
	{"path segment boundary", "decide.go",
		[][2]string{{"if len(p) < n || len(p) > n && p[n] != '/' {", "if len(p) < n {"}}, "TestDecide"},
	{"IDNA-to-IP refusal", "canon.go",
		[][2]string{{"if i == len(a) && numericLabel(label) {", "if false && numericLabel(label) {"}}, "TestCanonicalHost"},
	{"userinfo refusal", "canon.go",
		[][2]string{{"if u.User != nil {", "if false {"}}, "TestCanonicalRequest"},
	{"Host agreement", "canon.go",
		[][2]string{{"if err != nil || h2 != host || p2 != port {", "if err != nil || false && (h2 != host || p2 != port) {"}}, "TestCanonicalRequest"},
	{"port leading zero", "canon.go",
		[][2]string{{"if s == \"\" || len(s) > 5 || s[0] == '0' {", "if s == \"\" || len(s) > 5 {"}}, "TestCanonicalRequest"},
	{"encoded slash", "canon.go",
		[][2]string{{"case d == '/' || d == '\\\\':", "case false:"}}, "TestCanonicalRequest"},
	{"encoded unreserved", "canon.go",
		[][2]string{{"case isUnreserved(d):", "case false:"}}, "TestCanonicalRequest"},
	{"dot segments", "canon.go",
		[][2]string{{`case seg == "." || seg == "..":`, `case false:`}}, "TestCanonicalRequest"},
	{"empty segments", "canon.go",
		[][2]string{{"case i == start && i < len(p):", "case false:"}}, "TestCanonicalRequest"},
	{"trailers refused", "canon.go",
		[][2]string{{"if len(r.Trailer) > 0 {", "if false {"}}, "TestCanonicalRequest"},
	// The same mutants, killed by the reusable property suite.
	{"header denylist in Decide (property suite)", "decide.go",
		[][2]string{{"if canonicalHeaderDenied(k) {", "if false && canonicalHeaderDenied(k) {"}}, "TestRulesDecider"},
	{"default-deny header allowlist (property suite)", "decide.go",
		[][2]string{{"if listing&(1<<i) == 0 {", "if false && listing&(1<<i) == 0 {"}}, "TestRulesDecider"},
	{"wildcard never matches the apex (property suite)", "decide.go",
		[][2]string{{"hosts := rs.exact[req.Host]", "hosts := rs.exact[req.Host] | rs.wild[req.Host]"}}, "TestRulesDecider"},
	{"path segment boundary (property suite)", "decide.go",
		[][2]string{{"if len(p) < n || len(p) > n && p[n] != '/' {", "if len(p) < n {"}}, "TestRulesDecider"},
	{"request shape re-check (property suite)", "decide.go",
		[][2]string{{"if err := checkRequestShape(req); err != nil {", "if err := checkRequestShape(req); false && err != nil {"}}, "TestRulesDecider"},
	{"CONNECT and TRACE refused in rules", "rules.go",
		[][2]string{{`case http.MethodConnect, http.MethodTrace, "TRACK":`, `case "":`}}, "TestParseRulesRefuses"},
	{"rules decoded strictly", "rules.go",
		[][2]string{
			{"v, err := strictjson.Parse(doc, rulesJSON)", "var v any\n\terr := json.Unmarshal(doc, &v)"},
			{"if err := strictjson.Unmarshal(doc, &rules, rulesJSON); err != nil {", "if err := json.Unmarshal(doc, &rules); err != nil {"},
		}, "TestParseRulesRefuses"},
	{"purity proof covers every non-I/O file (policy.go)", "policy.go",
		[][2]string{{"import (\n", "import (\n\t_ \"net\"\n"}}, "TestEngineIsPure"},
	{"purity proof covers every non-I/O file (addr.go)", "addr.go",
		[][2]string{{"import \"net/netip\"", "import (\n\t\"net/netip\"\n\t_ \"os\"\n)"}}, "TestEngineIsPure"},
}

// TestMutants proves that every security check of the rule engine is
// tested: it builds each mutant above and requires its test to fail. It
// runs only when CHECKFU_MUTANTS=1 (it compiles the package once per
// mutant).
func TestMutants(t *testing.T) {
	if os.Getenv("CHECKFU_MUTANTS") != "1" {
		t.Skip("set CHECKFU_MUTANTS=1 to run the mutants")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	for _, m := range mutants {
		t.Run(m.name, func(t *testing.T) { runMutant(t, goBin, m.file, m.edits, m.kills) })
	}
}

// runMutant applies edits to file (each old text must occur exactly once),
// builds the package with the mutated file through `go test -overlay`, and
// requires the tests matching kills to fail. A mutant that does not
// compile fails runMutant: it proves nothing. Rapid fail files are not
// written, so the working tree stays untouched.
func runMutant(t *testing.T, goBin, file string, edits [][2]string, kills string) {
	t.Helper()
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	text := string(src)
	for _, e := range edits {
		if n := strings.Count(text, e[0]); n != 1 {
			t.Fatalf("%s: %q occurs %d times, want 1 (update the mutant)", file, e[0], n)
		}
		text = strings.Replace(text, e[0], e[1], 1)
	}
	dir := t.TempDir()
	mutated := filepath.Join(dir, filepath.Base(file))
	if err := os.WriteFile(mutated, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	abs, _ := filepath.Abs(file)
	overlay, _ := json.Marshal(map[string]map[string]string{"Replace": {abs: mutated}})
	overlayFile := filepath.Join(dir, "overlay.json")
	if err := os.WriteFile(overlayFile, overlay, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(goBin, "test", "-count=1", "-overlay", overlayFile, "-run", "^("+kills+")$", ".", "-args", "-rapid.nofailfile", "-rapid.checks=1000")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("mutant survived: %s still passes\n%s", kills, out)
	}
	if !regexp.MustCompile(`--- FAIL: (` + kills + `) `).Match(out) {
		t.Fatalf("mutant did not fail a named test (build error?):\n%s", out)
	}
}
