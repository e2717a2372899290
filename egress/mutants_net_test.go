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

// A netMutant deletes or inverts one security check of the network half
// (addresses, dialer, client, policy, guard). Each must compile and must
// make the named tests fail.
type netMutant struct {
	name  string
	file  string
	edits [][2]string // old, new; each old must occur exactly once
	kills string      // regexp of the tests that must go red
}

var netMutants = []netMutant{
	{"zone refusal", "addr.go", [][2]string{{`if !addr.IsValid() || addr.Zone() != "" {`, `if !addr.IsValid() {`}}, "TestIsPublic"},
	{"unmap before classifying", "addr.go", [][2]string{{"addr = addr.Unmap()\n", "\n"}}, "TestIsPublic"},
	{"2000::/3 positive check", "addr.go", [][2]string{{"if !globalUnicast6.Contains(addr) {", "if false {"}}, "TestIsPublic"},
	{"connect-time check", "dial.go", [][2]string{{"return d.permit(ap.Addr().String(), ap, own)", "_ = ap\n\t\treturn nil"}}, "TestConnectTimeCheck"},
	{"connect-time hook installed", "dial.go", [][2]string{{"nd := net.Dialer{Timeout: timeout, ControlContext: d.control(own)}", "nd := net.Dialer{Timeout: timeout}"}}, "TestConnectTimeCheck"},
	{"one non-public answer refuses the name", "dial.go", [][2]string{{"if err := d.permit(host, netip.AddrPortFrom(a, uint16(port)), own); err != nil {", "if err := d.permit(host, netip.AddrPortFrom(a, uint16(port)), own); false && err != nil {"}}, "TestDialerMixedAnswersPoisonName"},
	{"classification in the dialer", "dial.go", [][2]string{{"if !treated {", "if false {"}}, "TestDialerRebinding|TestGuardRebinding|TestClientDialsOnlyPublic|TestConnectTimeCheck"},
	{"own listener never dialled", "dial.go", [][2]string{{"if x.Port() == ap.Port() && (x.Addr() == a || x.Addr().IsUnspecified() && a.IsLoopback()) {", "if false && x.Port() == ap.Port() {"}}, "TestDialerExcludesOwnListener"},
	{"wildcard listener excluded on every loopback address", "dial.go", [][2]string{{" || x.Addr().IsUnspecified() && a.IsLoopback()) {", ") {"}}, "TestDialerExcludesWildcardListenerOnLoopback"},
	{"this host's addresses refused, test blocks included", "dial.go", [][2]string{{"if slices.Contains(own, a) && !(treated && a.IsLoopback()) {", "if !treated && slices.Contains(own, a) {"}}, "TestDialerRefusesOwnAddressesAtDialTime"},
	{"this host's addresses read at every dial", "dial.go", [][2]string{{"\tall, err := h.load()", "\tif last := h.last.Load(); last != nil {\n\t\treturn *last\n\t}\n\tall, err := h.load()"}}, "TestDialerRefusesOwnAddressesAtDialTime|TestHostAddrsIsCurrent"},
	{"loopback treated as public stays dialable", "dial.go", [][2]string{{"if slices.Contains(own, a) && !(treated && a.IsLoopback()) {", "if slices.Contains(own, a) {"}}, "TestDialerRefusesOwnAddressesAtDialTime"},
	{"treat-as-public limited to test blocks", "dial.go", [][2]string{{"if !p.IsValid() || p != p.Masked() || !insideTestTopology(p) {", "if !p.IsValid() || p != p.Masked() {"}}, "TestNewDialerRefusesWideTestBlocks"},
	{"client decides every request", "client.go", [][2]string{{"if _, err := c.rules.Decide(&creq); err != nil {", "if _, err := c.rules.Decide(&creq); false && err != nil {"}}, "TestClientRefusesBeforeDNS"},
	{"client refuses redirects", "client.go", [][2]string{{"case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther, http.StatusTemporaryRedirect, http.StatusPermanentRedirect:", "case 0:"}}, "TestClientRefusesRedirects"},
	{"client refuses any 3xx with a Location", "client.go", [][2]string{{`return resp.StatusCode/100 == 3 && resp.Header.Get("Location") != ""`, `return false`}}, "TestClientRefusesRedirects"},
	{"client never follows", "client.go", [][2]string{{"CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },", "CheckRedirect: func(*http.Request, []*http.Request) error { return nil },"}}, "TestClientRefusesRedirects|TestNewClientProperties"},
	{"client has no proxy", "client.go", [][2]string{{"Proxy:                 nil, // never a proxy, whatever the environment says", "Proxy: http.ProxyFromEnvironment,"}}, "TestNewClientProperties"},
	{"client dials public only", "client.go", [][2]string{{"DialContext:           func(ctx context.Context, n, a string) (net.Conn, error) { return c.dial(ctx, n, a) },", "DialContext: (&net.Dialer{}).DialContext,"}}, "TestClientDialsOnlyPublic"},
	{"redirect location echoing a credential is withheld", "client.go", [][2]string{{"if strings.Contains(loc, s) || strings.Contains(unescaped, s) {", "if false && (strings.Contains(loc, s) || strings.Contains(unescaped, s)) {"}}, "TestClientRefusesRedirects"},
	{"header denylist through the client", "decide.go", [][2]string{{"if canonicalHeaderDenied(k) {", "if false && canonicalHeaderDenied(k) {"}}, "TestClientRefusesBeforeDNS"},
	{"policy fields per member", "policy.go", [][2]string{{"if !slices.Contains(allowed, k) {", "if false && !slices.Contains(allowed, k) {"}}, "TestParseNetworkPolicyRefuses"},
	{"policy decoded strictly", "policy.go", [][2]string{{"if err := strictjson.Unmarshal(doc, &fields, policyJSONOpts); err != nil {", "if err := json.Unmarshal(doc, &fields); err != nil {"}}, "TestParseNetworkPolicyRefuses"},
	{"allowlist must reach something", "policy.go", [][2]string{{"if len(hosts) == 0 && !a.AllowPackageManagers {", "if false {"}}, "TestParseNetworkPolicyRefuses"},
	{"allowlist matches exact host and port", "policy.go", [][2]string{{"}); ok {\n\t\t\treturn nil", "}); ok || true {\n\t\t\treturn nil"}}, "TestCompileExpandsPresets|TestGuardModes"},
	{"canonical-target memo keyed by the raw authority", "target_cache.go", [][2]string{
		{"c.m.Load(authority)", "c.m.Load(c.scheme)"}, {"c.m.LoadOrStore(authority, t)", "c.m.LoadOrStore(c.scheme, t)"}}, "TestTargetCacheMatchesCanonicalTarget|TestGuardModes"},
	{"guard proxies only http in absolute form", "guard.go", [][2]string{{`if r.URL.Scheme != "http" {`, `if false {`}}, "TestGuardRefusesMalformedTargets"},
	{"guard refuses userinfo", "guard.go", [][2]string{{"if r.URL.User != nil {", "if false {"}}, "TestGuardRefusesMalformedTargets"},
	{"CONNECT target in authority form", "guard.go", [][2]string{{" || r.URL.Host != r.RequestURI {", " {"}}, "TestGuardRefusesMalformedTargets|FuzzGuardConnectInvariant"},
	{"CONNECT names its port", "guard.go", [][2]string{{`; err != nil || r.URL.Host`, `; false && err != nil || r.URL.Host`}}, "TestGuardRefusesMalformedTargets|FuzzGuardConnectInvariant"},
	{"CONNECT dials the canonical target", "guard.go", [][2]string{{`up, err := g.dial(r.Context(), "tcp", target.authority)`, `up, err := g.dial(r.Context(), "tcp", r.Host)`}}, "FuzzGuardConnectInvariant"},
	{"guard never dials its own listener", "guard.go", [][2]string{{"Exclude:                 []netip.AddrPort{self},", "Exclude:                 []netip.AddrPort{self}[:0],"}}, "TestGuardModes"},
	{"guard checks policy (forward)", "guard.go", [][2]string{{"if err := g.policy.Permits(target.host, target.port); err != nil {\n\t\tg.refuse(w, r, err)\n\t\treturn\n\t}\n\t// One", "// One"}}, "TestGuardModes"},
	{"guard checks policy before DNS (CONNECT)", "guard.go", [][2]string{
		{"if err := g.policy.Permits(target.host, target.port); err != nil {\n\t\tg.refuse(w, r, err)\n\t\treturn\n\t}\n\tup, err := g.dial(r.Context(), \"tcp\", target.authority)",
			"up, err := g.dial(r.Context(), \"tcp\", target.authority)\n\tif err := g.policy.Permits(target.host, target.port); err != nil {\n\t\tg.refuse(w, r, err)\n\t\treturn\n\t}"}}, "TestGuardModes"},
}

// tableMutants deletes each row of the classification tables in turn.
func tableMutants(t *testing.T) []netMutant {
	src, err := os.ReadFile("addr.go")
	if err != nil {
		t.Fatal(err)
	}
	var out []netMutant
	for _, line := range strings.Split(string(src), "\n") {
		if strings.HasPrefix(line, "\tnetip.MustParsePrefix(") {
			out = append(out, netMutant{"table row " + strings.TrimSpace(line), "addr.go", [][2]string{{line + "\n", ""}}, "TestIsPublic"})
		}
	}
	if len(out) < 20 {
		t.Fatalf("found %d table rows in addr.go; the mutant generator is out of date", len(out))
	}
	return out
}

// TestNetMutants proves every security check of the network half is
// tested: it builds each mutant with `go test -overlay` (the working tree
// is never touched) and requires the named tests to fail. It runs only
// when CHECKFU_MUTANTS=1.
func TestNetMutants(t *testing.T) {
	if os.Getenv("CHECKFU_MUTANTS") != "1" {
		t.Skip("set CHECKFU_MUTANTS=1 to run the mutants")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	for _, m := range append(netMutants, tableMutants(t)...) {
		t.Run(m.name, func(t *testing.T) {
			src, err := os.ReadFile(m.file)
			if err != nil {
				t.Fatal(err)
			}
			text := string(src)
			for _, e := range m.edits {
				if n := strings.Count(text, e[0]); n != 1 {
					t.Fatalf("%s: %q occurs %d times, want 1 (update the mutant)", m.file, e[0], n)
				}
				text = strings.Replace(text, e[0], e[1], 1)
			}
			dir := t.TempDir()
			mutated := filepath.Join(dir, m.file)
			if err := os.WriteFile(mutated, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			abs, _ := filepath.Abs(m.file)
			overlay, _ := json.Marshal(map[string]map[string]string{"Replace": {abs: mutated}})
			overlayFile := filepath.Join(dir, "overlay.json")
			if err := os.WriteFile(overlayFile, overlay, 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(goBin, "test", "-count=1", "-overlay", overlayFile, "-run", "^("+m.kills+")$", ".")
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Fatalf("mutant survived: %s still passes with %q\n%s", m.kills, m.name, out)
			}
			if !regexp.MustCompile(`--- FAIL: (` + m.kills + `) `).Match(out) {
				t.Fatalf("mutant did not fail a named test (build error?):\n%s", out)
			}
		})
	}
}
