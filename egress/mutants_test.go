package egress

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/checkfu/checkfu/internal/mutation"
)

// TestMutants proves that every security check of the package is tested:
// internal/mutation builds each mutant below (and one per row of the
// address tables and of the guard's forwarding-header list) with `go test
// -overlay`, so the working tree is never touched, and requires one of
// the named tests to fail. It runs only when CHECKFU_MUTANTS=1:
//
//	CHECKFU_MUTANTS=1 go test -run '^TestMutants$' ./egress/
func TestMutants(t *testing.T) {
	mutation.Run(t, append(append(mutants[:len(mutants):len(mutants)], tableMutants(t)...), forwardingMutants(t)...))
}

// mutants each delete or invert one check; Kills names the tests that
// must go red.
var mutants = []mutation.Mutant{
	{Name: "refusals past the connection cap read on without bound", File: "guard.go", Kills: "TestRefusingConnectionsBound",
		Edits: []mutation.Edit{{Old: "refusing: make(chan struct{}, RefusingConnections)", New: "refusing: make(chan struct{}, 1<<20)"}}},
	{Name: "a refusal with no slot left reads on anyway", File: "guard.go", Kills: "TestRefusingConnectionsBound",
		Edits: []mutation.Edit{{Old: "\tdefault:\n\t\tc.Close()\n\t\treturn\n\t}\n\tgo func() {\n\t\tdefer func() { <-g.refusing }()", New: "\tdefault:\n\t\tgo func() { defer c.Close(); c.SetDeadline(time.Now().Add(time.Second)); io.Copy(io.Discard, io.LimitReader(c, 64<<10)) }()\n\t\treturn\n\t}\n\tgo func() {\n\t\tdefer func() { <-g.refusing }()"}}},
	{Name: "PresetEcosystems hands out the table catalogs are checked against", File: "preset.go", Kills: "TestPresetEcosystemsIsACopy",
		Edits: []mutation.Edit{{Old: "func PresetEcosystems() []string { return slices.Clone(presetEcosystems[:]) }", New: "func PresetEcosystems() []string { return presetEcosystems[:] }"}}},
	// The wt-rtguard pass: a workload's header and a forwarded
	// exchange's silences are bounded.
	{Name: "guard request header unbounded", File: "guard.go", Kills: "TestGuardBoundsRequestHeader",
		Edits: []mutation.Edit{{Old: "MaxHeaderBytes: MaxRequestHeaderBytes - 4096,", New: ""}}},
	{Name: "a stalled request body holds the exchange", File: "forward.go", Kills: "TestGuardCutsAStalledRequestBody",
		Edits: []mutation.Edit{{Old: "\tb.rc.SetReadDeadline(time.Now().Add(b.idle))\n", New: ""}}},
	{Name: "an unread response holds the exchange", File: "forward.go", Kills: "TestGuardCutsAnUnreadResponse",
		Edits: []mutation.Edit{{Old: "rc.SetWriteDeadline(time.Now().Add(g.tunnelIdle))", New: ""}}},
	{Name: "a stalled response body holds the exchange", File: "forward.go", Kills: "TestGuardCutsAStalledResponseBody",
		Edits: []mutation.Edit{{Old: "\t\tuc.armRead(g.tunnelIdle)\n", New: ""}}},
	{Name: "an ended request body keeps its read deadline", File: "forward.go", Kills: "TestGuardIdleBoundSparesHealthyExchanges",
		Edits: []mutation.Edit{{Old: "\t\tb.rc.SetReadDeadline(time.Time{})\n", New: ""}}},
	{Name: "refusal log lines unpaced", File: "guard.go", Kills: "TestGuardBoundsRefusalLog",
		Edits: []mutation.Edit{{Old: "return g.refusalLog.Allow(time.Now())", New: "return 0, true"}}},
	{Name: "idle-connection close lines unpaced", File: "guard.go", Kills: "TestGuardBoundsReclaimLog",
		Edits: []mutation.Edit{{Old: "if unlogged, ok := g.reclaimLog.Allow(time.Now()); ok {", New: "if unlogged, ok := int64(0), true; ok {"}}},
	{Name: "refusals not counted", File: "guard.go", Kills: "TestGuardBoundsRefusalLog",
		Edits: []mutation.Edit{{Old: "\tg.refusals.Add(1)\n", New: ""}}},
	{Name: "unlogged refusals not reported", File: "guard.go", Kills: "TestGuardBoundsRefusalLog",
		Edits: []mutation.Edit{{Old: `"reason", err.Error(), "unlogged_before", unlogged)`, New: `"reason", err.Error(), "unlogged_before", 0*unlogged)`}}},
	{Name: "hostile text reaches the guard's log unescaped", File: "guard.go",
		Edits: []mutation.Edit{{Old: "\treturn checkfu.Quote(s)\n}\n\n// refuse answers", New: "\treturn s\n}\n\n// refuse answers"}},
		Kills: "TestLogTextQuotesOnce"},
	// The rule engine.
	{Name: "header denylist in Decide", File: "decide.go", Kills: "TestDenylistWinsInDecide",
		Edits: []mutation.Edit{{Old: "if canonicalHeaderDenied(k) {", New: "if false && canonicalHeaderDenied(k) {"}}},
	{Name: "header denylist at parse time", File: "rules.go", Kills: "TestParseRulesRefuses",
		Edits: []mutation.Edit{{Old: "if canonicalHeaderDenied(k) {", New: "if false && canonicalHeaderDenied(k) {"}}},
	{Name: "underscore aliases", File: "headers.go", Kills: "TestHeaderDenied",
		Edits: []mutation.Edit{{Old: "if strings.IndexByte(name, '_') >= 0 {", New: "if false {"}}},
	{Name: "X-Forwarded-* prefix", File: "headers.go", Kills: "TestHeaderDenied",
		Edits: []mutation.Edit{{Old: `"X-Forwarded-",`, New: ``}}},
	{Name: "default-deny header allowlist", File: "decide.go", Kills: "TestDecide",
		Edits: []mutation.Edit{{Old: "if listing&(1<<i) == 0 {", New: "if false && listing&(1<<i) == 0 {"}}},
	{Name: "method check", File: "decide.go", Kills: "TestDecide",
		Edits: []mutation.Edit{{Old: "if !contains(r.methods, req.Method) {", New: "if false {"}}},
	{Name: "rule matched before DNS", File: "decide.go", Kills: "TestEngineIsPure",
		Edits: []mutation.Edit{{Old: "import (\n", New: "import (\n\t\"context\"\n\t\"net\"\n"}, {Old: "if err := checkRequestShape(req); err != nil {", New: "net.DefaultResolver.LookupHost(context.Background(), req.Host)\n\tif err := checkRequestShape(req); err != nil {"}}},
	{Name: "rule matched before DNS (behavioural)", File: "decide.go", Kills: "TestDecideDoesNoLookup",
		Edits: []mutation.Edit{{Old: "import (\n", New: "import (\n\t\"context\"\n\t\"net\"\n"}, {Old: "if err := checkRequestShape(req); err != nil {", New: "net.DefaultResolver.LookupHost(context.Background(), req.Host)\n\tif err := checkRequestShape(req); err != nil {"}}},
	{Name: "request shape re-check in Decide", File: "decide.go", Kills: "TestDecideRefusesHandBuilt",
		Edits: []mutation.Edit{{Old: "if err := checkRequestShape(req); err != nil {", New: "if err := checkRequestShape(req); false && err != nil {"}}},
	{Name: "wildcard never matches the apex", File: "decide.go", Kills: "TestDecide",
		Edits: []mutation.Edit{{Old: "hosts := rs.exact[req.Host]", New: "hosts := rs.exact[req.Host] | rs.wild[req.Host]"}}},
	{Name: "wildcard matches one label", File: "decide.go", Kills: "TestDecide",
		Edits: []mutation.Edit{{Old: "if i := strings.IndexByte(req.Host, '.'); i >= 0 {", New: "for i := range len(req.Host) {\n\t\t\tif req.Host[i] != '.' {\n\t\t\t\tcontinue\n\t\t\t}"}}},
	{Name: "denylist map lookup", File: "headers.go", Kills: "TestHeaderDenied",
		Edits: []mutation.Edit{{Old: "if maybeDenied(name) {", New: "if false && maybeDenied(name) {"}}},
	{Name: "public-suffix wildcard", File: "rules.go", Kills: "TestParseRulesRefuses",
		Edits: []mutation.Edit{{Old: "if ps, _ := publicsuffix.PublicSuffix(h); ps == h {", New: "if ps, _ := publicsuffix.PublicSuffix(h); false && ps == h {"}}},
	{Name: "path segment boundary", File: "decide.go", Kills: "TestDecide",
		Edits: []mutation.Edit{{Old: "if len(p) < n || len(p) > n && p[n] != '/' {", New: "if len(p) < n {"}}},
	{Name: "IDNA-to-IP refusal", File: "canon.go", Kills: "TestCanonicalHost",
		Edits: []mutation.Edit{{Old: "if i == len(a) && numericLabel(label) {", New: "if false && numericLabel(label) {"}}},
	{Name: "userinfo refusal", File: "canon.go", Kills: "TestCanonicalRequest",
		Edits: []mutation.Edit{{Old: "if u.User != nil {", New: "if false {"}}},
	{Name: "Host agreement", File: "canon.go", Kills: "TestCanonicalRequest",
		Edits: []mutation.Edit{{Old: "if err != nil || h2 != host || p2 != port {", New: "if err != nil || false && (h2 != host || p2 != port) {"}}},
	{Name: "port leading zero", File: "canon.go", Kills: "TestCanonicalRequest",
		Edits: []mutation.Edit{{Old: "if s == \"\" || len(s) > 5 || s[0] == '0' {", New: "if s == \"\" || len(s) > 5 {"}}},
	{Name: "encoded slash", File: "canon.go", Kills: "TestCanonicalRequest",
		Edits: []mutation.Edit{{Old: "case d == '/' || d == '\\\\':", New: "case false:"}}},
	{Name: "encoded unreserved", File: "canon.go", Kills: "TestCanonicalRequest",
		Edits: []mutation.Edit{{Old: "case isUnreserved(d):", New: "case false:"}}},
	{Name: "dot segments", File: "canon.go", Kills: "TestCanonicalRequest",
		Edits: []mutation.Edit{{Old: `case seg == "." || seg == "..":`, New: `case false:`}}},
	{Name: "empty segments", File: "canon.go", Kills: "TestCanonicalRequest",
		Edits: []mutation.Edit{{Old: "case i == start && i < len(p):", New: "case false:"}}},
	{Name: "trailers refused", File: "canon.go", Kills: "TestCanonicalRequest",
		Edits: []mutation.Edit{{Old: "if len(r.Trailer) > 0 {", New: "if false {"}}},
	{Name: "header denylist in Decide (property suite)", File: "decide.go", Kills: "TestRulesDecider",
		Edits: []mutation.Edit{{Old: "if canonicalHeaderDenied(k) {", New: "if false && canonicalHeaderDenied(k) {"}}},
	{Name: "default-deny header allowlist (property suite)", File: "decide.go", Kills: "TestRulesDecider",
		Edits: []mutation.Edit{{Old: "if listing&(1<<i) == 0 {", New: "if false && listing&(1<<i) == 0 {"}}},
	{Name: "wildcard never matches the apex (property suite)", File: "decide.go", Kills: "TestRulesDecider",
		Edits: []mutation.Edit{{Old: "hosts := rs.exact[req.Host]", New: "hosts := rs.exact[req.Host] | rs.wild[req.Host]"}}},
	{Name: "path segment boundary (property suite)", File: "decide.go", Kills: "TestRulesDecider",
		Edits: []mutation.Edit{{Old: "if len(p) < n || len(p) > n && p[n] != '/' {", New: "if len(p) < n {"}}},
	{Name: "request shape re-check (property suite)", File: "decide.go", Kills: "TestRulesDecider",
		Edits: []mutation.Edit{{Old: "if err := checkRequestShape(req); err != nil {", New: "if err := checkRequestShape(req); false && err != nil {"}}},
	{Name: "CONNECT and TRACE refused in rules", File: "rules.go", Kills: "TestParseRulesRefuses",
		Edits: []mutation.Edit{{Old: `case http.MethodConnect, http.MethodTrace, "TRACK":`, New: `case "":`}}},
	{Name: "rules decoded strictly", File: "rules.go", Kills: "TestParseRulesRefuses",
		Edits: []mutation.Edit{{Old: "v, err := strictjson.Parse(doc, rulesJSON)", New: "var v any\n\terr := json.Unmarshal(doc, &v)"}, {Old: "if err := strictjson.Unmarshal(doc, &rules, rulesJSON); err != nil {", New: "if err := json.Unmarshal(doc, &rules); err != nil {"}}},
	{Name: "purity proof covers every non-I/O file (policy.go)", File: "policy.go", Kills: "TestEngineIsPure",
		Edits: []mutation.Edit{{Old: "import (\n", New: "import (\n\t_ \"net\"\n"}}},
	{Name: "purity proof covers every non-I/O file (addr.go)", File: "addr.go", Kills: "TestEngineIsPure",
		Edits: []mutation.Edit{{Old: "import \"net/netip\"", New: "import (\n\t\"net/netip\"\n\t_ \"os\"\n)"}}},

	// The network half: addresses, dialer, client, policy, guard.
	{Name: "zone refusal", File: "addr.go", Kills: "TestIsPublic",
		Edits: []mutation.Edit{{Old: `if !addr.IsValid() || addr.Zone() != "" {`, New: `if !addr.IsValid() {`}}},
	{Name: "unmap before classifying", File: "addr.go", Kills: "TestIsPublic",
		Edits: []mutation.Edit{{Old: "addr = addr.Unmap()\n", New: "\n"}}},
	{Name: "2000::/3 positive check", File: "addr.go", Kills: "TestIsPublic",
		Edits: []mutation.Edit{{Old: "if !globalUnicast6.Contains(addr) {", New: "if false {"}}},
	{Name: "connect-time check", File: "dial.go", Kills: "TestConnectTimeCheck",
		Edits: []mutation.Edit{{Old: "return d.permit(ap.Addr().String(), ap, own)", New: "_ = ap\n\t\treturn nil"}}},
	{Name: "connect-time hook installed", File: "dial.go", Kills: "TestConnectTimeCheck",
		Edits: []mutation.Edit{{Old: "nd := net.Dialer{Timeout: connectShare(time.Until(deadline), len(addrs)-i), ControlContext: d.control(own)}", New: "nd := net.Dialer{Timeout: connectShare(time.Until(deadline), len(addrs)-i)}"}}},
	{Name: "a name's addresses each get the whole timeout", File: "dial.go", Kills: "TestDialOfManyDeadAddressesIsBounded",
		Edits: []mutation.Edit{{Old: "ctx, cancel := context.WithTimeout(ctx, timeout)\n\tdefer cancel()\n\tdeadline, _ := ctx.Deadline()", New: "deadline := time.Now().Add(time.Duration(len(addrs)) * timeout)"}}},
	{Name: "an address's share of the timeout exceeds what is left", File: "dial.go", Kills: "TestConnectShare",
		Edits: []mutation.Edit{{Old: "return min(max(share, minConnectShare), remaining)", New: "return max(share, minConnectShare)"}}},
	{Name: "one non-public answer refuses the name", File: "dial.go", Kills: "TestDialerMixedAnswersPoisonName",
		Edits: []mutation.Edit{{Old: "if err := d.permit(host, netip.AddrPortFrom(a, uint16(port)), own); err != nil {", New: "if err := d.permit(host, netip.AddrPortFrom(a, uint16(port)), own); false && err != nil {"}}},
	{Name: "classification in the dialer", File: "dial.go", Kills: "TestDialerRebinding|TestGuardRebinding|TestClientDialsOnlyPublic|TestConnectTimeCheck",
		Edits: []mutation.Edit{{Old: "if !treated {", New: "if false {"}}},
	{Name: "own listener never dialled", File: "dial.go", Kills: "TestDialerExcludesOwnListener",
		Edits: []mutation.Edit{{Old: "if x.Port() == ap.Port() && (x.Addr() == a || x.Addr().IsUnspecified() && a.IsLoopback()) {", New: "if false && x.Port() == ap.Port() {"}}},
	{Name: "wildcard listener excluded on every loopback address", File: "dial.go", Kills: "TestDialerExcludesWildcardListenerOnLoopback",
		Edits: []mutation.Edit{{Old: " || x.Addr().IsUnspecified() && a.IsLoopback()) {", New: ") {"}}},
	{Name: "this host's addresses refused, test blocks included", File: "dial.go", Kills: "TestDialerRefusesOwnAddressesAtDialTime",
		Edits: []mutation.Edit{{Old: "if slices.Contains(own, a) && !(treated && a.IsLoopback()) {", New: "if !treated && slices.Contains(own, a) {"}}},
	{Name: "this host's addresses read at every dial", File: "dial.go", Kills: "TestDialerRefusesOwnAddressesAtDialTime|TestHostAddrsIsCurrent",
		Edits: []mutation.Edit{{Old: "\tall, err := h.load()", New: "\tif last := h.last.Load(); last != nil {\n\t\treturn *last\n\t}\n\tall, err := h.load()"}}},
	{Name: "loopback treated as public stays dialable", File: "dial.go", Kills: "TestDialerRefusesOwnAddressesAtDialTime",
		Edits: []mutation.Edit{{Old: "if slices.Contains(own, a) && !(treated && a.IsLoopback()) {", New: "if slices.Contains(own, a) {"}}},
	{Name: "treat-as-public limited to test blocks", File: "dial.go", Kills: "TestNewDialerRefusesWideTestBlocks",
		Edits: []mutation.Edit{{Old: "if !p.IsValid() || p != p.Masked() || !insideTestTopology(p) {", New: "if !p.IsValid() || p != p.Masked() {"}}},
	{Name: "client decides every request", File: "allowed.go", Kills: "TestClientRefusesBeforeDNS",
		Edits: []mutation.Edit{{Old: "if _, err := rs.Decide(&creq); err != nil {", New: "if _, err := rs.Decide(&creq); false && err != nil {"}}},
	{Name: "Send sends an Allowed without a decision", File: "client.go", Kills: "TestSendDecidesWhatOtherRulesAllowed|TestSendRefusesWhatNoRulesAllowed",
		Edits: []mutation.Edit{{Old: "if a.by == nil || a.by != c.rules.set() {", New: "if false {"}}},
	{Name: "Send does not check which rules allowed", File: "client.go", Kills: "TestSendDecidesWhatOtherRulesAllowed|TestSendSeesARulesChange",
		Edits: []mutation.Edit{{Old: "if a.by == nil || a.by != c.rules.set() {", New: "if a.by == nil {"}}},
	{Name: "Send takes the zero Allowed as the emptied rules'", File: "client.go", Kills: "TestSendRefusesWhatNoRulesAllowed",
		Edits: []mutation.Edit{{Old: "if a.by == nil || a.by != c.rules.set() {", New: "if a.by != c.rules.set() {"}}},
	{Name: "Send ignores its own refusal", File: "client.go", Kills: "TestSendDecidesWhatOtherRulesAllowed|TestSendRefusesWhatNoRulesAllowed",
		Edits: []mutation.Edit{{Old: "if _, err := c.rules.Decide(&a.req); err != nil {", New: "if _, err := c.rules.Decide(&a.req); false && err != nil {"}}},
	{Name: "attach writes into the Allowed", File: "client.go", Kills: "TestSendSendsWhatWasAllowed",
		Edits: []mutation.Edit{{Old: "Header:        creq.Header.Clone(),", New: "Header:        creq.Header,"}}},
	{Name: "Allowed.Request shares the header", File: "allowed.go", Kills: "TestAllowedRequestIsACopy",
		Edits: []mutation.Edit{{Old: "r.Header = r.Header.Clone()", New: "_ = r.Header.Clone()"}}},
	{Name: "client refuses redirects", File: "client.go", Kills: "TestClientRefusesRedirects",
		Edits: []mutation.Edit{{Old: "case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther, http.StatusTemporaryRedirect, http.StatusPermanentRedirect:", New: "case 0:"}}},
	{Name: "client refuses any 3xx with a Location", File: "client.go", Kills: "TestClientRefusesRedirects",
		Edits: []mutation.Edit{{Old: `return resp.StatusCode/100 == 3 && resp.Header.Get("Location") != ""`, New: `return false`}}},
	{Name: "client never follows", File: "client.go", Kills: "TestClientRefusesRedirects|TestNewClientProperties",
		Edits: []mutation.Edit{{Old: "CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },", New: "CheckRedirect: func(*http.Request, []*http.Request) error { return nil },"}}},
	{Name: "client has no proxy", File: "client.go", Kills: "TestNewClientProperties",
		Edits: []mutation.Edit{{Old: "Proxy:                 nil, // never a proxy, whatever the environment says", New: "Proxy: http.ProxyFromEnvironment,"}}},
	{Name: "client dials public only", File: "client.go", Kills: "TestClientDialsOnlyPublic",
		Edits: []mutation.Edit{{Old: "DialContext:           func(ctx context.Context, n, a string) (net.Conn, error) { return c.dial(ctx, n, a) },", New: "DialContext: (&net.Dialer{}).DialContext,"}}},
	{Name: "redirect location echoing a credential is withheld", File: "client.go", Kills: "TestClientRefusesRedirects",
		Edits: []mutation.Edit{{Old: "if echoes(loc, secrets) || echoes(unescaped, secrets) {", New: "if false && (echoes(loc, secrets) || echoes(unescaped, secrets)) {"}}},
	{Name: "header denylist through the client", File: "decide.go", Kills: "TestClientRefusesBeforeDNS",
		Edits: []mutation.Edit{{Old: "if canonicalHeaderDenied(k) {", New: "if false && canonicalHeaderDenied(k) {"}}},
	{Name: "policy fields per member", File: "policy.go", Kills: "TestParseNetworkPolicyRefuses",
		Edits: []mutation.Edit{{Old: "if !slices.Contains(allowed, k) {", New: "if false && !slices.Contains(allowed, k) {"}}},
	{Name: "policy decoded strictly", File: "policy.go", Kills: "TestParseNetworkPolicyRefuses",
		Edits: []mutation.Edit{{Old: "if err := strictjson.Unmarshal(doc, &fields, policyJSONOpts); err != nil {", New: "if err := json.Unmarshal(doc, &fields); err != nil {"}}},
	{Name: "allowlist must reach something", File: "policy.go", Kills: "TestParseNetworkPolicyRefuses",
		Edits: []mutation.Edit{{Old: "if len(hosts) == 0 && !a.AllowPackageManagers {", New: "if false {"}}},
	{Name: "allowlist matches exact host and port", File: "policy.go", Kills: "TestCompileExpandsPresets|TestGuardModes",
		Edits: []mutation.Edit{{Old: "}); ok {\n\t\t\treturn nil", New: "}); ok || true {\n\t\t\treturn nil"}}},
	{Name: "canonical-target memo keyed by the raw authority", File: "target_cache.go", Kills: "TestTargetCacheMatchesCanonicalTarget|TestGuardModes",
		Edits: []mutation.Edit{{Old: "c.m.Load(authority)", New: "c.m.Load(c.scheme)"}, {Old: "c.m.LoadOrStore(authority, t)", New: "c.m.LoadOrStore(c.scheme, t)"}}},
	{Name: "guard proxies only http in absolute form", File: "guard.go", Kills: "TestGuardRefusesMalformedTargets",
		Edits: []mutation.Edit{{Old: `if r.URL.Scheme != "http" {`, New: `if false {`}}},
	{Name: "guard refuses userinfo", File: "guard.go", Kills: "TestGuardRefusesMalformedTargets",
		Edits: []mutation.Edit{{Old: "if r.URL.User != nil {", New: "if false {"}}},
	{Name: "CONNECT target in authority form", File: "guard.go", Kills: "TestGuardRefusesMalformedTargets|FuzzGuardConnectInvariant",
		Edits: []mutation.Edit{{Old: " || r.URL.Host != r.RequestURI {", New: " {"}}},
	{Name: "CONNECT names its port", File: "guard.go", Kills: "TestGuardRefusesMalformedTargets|FuzzGuardConnectInvariant",
		Edits: []mutation.Edit{{Old: `; err != nil || r.URL.Host`, New: `; false && err != nil || r.URL.Host`}}},
	{Name: "CONNECT dials the canonical target", File: "guard.go", Kills: "FuzzGuardConnectInvariant",
		Edits: []mutation.Edit{{Old: `up, err := g.dial(r.Context(), "tcp", target.authority)`, New: `up, err := g.dial(r.Context(), "tcp", r.Host)`}}},
	{Name: "no header timeout on a workload connection", File: "guard.go", Kills: "TestGuardServerBounds",
		Edits: []mutation.Edit{{Old: "ReadHeaderTimeout: HeaderTimeout, ", New: ""}}},
	{Name: "no keep-alive timeout on a workload connection", File: "guard.go", Kills: "TestGuardServerBounds",
		Edits: []mutation.Edit{{Old: "IdleTimeout: KeepAliveTimeout, ", New: ""}}},
	{Name: "guard never dials its own listener", File: "guard.go", Kills: "TestGuardModes",
		Edits: []mutation.Edit{{Old: "Exclude:                 []netip.AddrPort{self},", New: "Exclude:                 []netip.AddrPort{self}[:0],"}}},
	{Name: "guard checks policy (forward)", File: "guard.go", Kills: "TestGuardModes",
		Edits: []mutation.Edit{{Old: "if err := g.policy.Permits(target.host, target.port); err != nil {\n\t\tg.refuse(w, r, err)\n\t\treturn\n\t}\n\t// One", New: "// One"}}},
	{Name: "guard checks policy before DNS (CONNECT)", File: "guard.go", Kills: "TestGuardModes",
		Edits: []mutation.Edit{
			{Old: "if err := g.policy.Permits(target.host, target.port); err != nil {\n\t\tg.refuse(w, r, err)\n\t\treturn\n\t}\n\tsrc := sourceOf(r)", New: "src := sourceOf(r)"},
			{Old: "\tup, err := g.dial(r.Context(), \"tcp\", target.authority)\n\tif err != nil {\n\t\tg.fail(w, r, err)\n\t\treturn\n\t}\n", New: "\tup, err := g.dial(r.Context(), \"tcp\", target.authority)\n\tif err != nil {\n\t\tg.fail(w, r, err)\n\t\treturn\n\t}\n\tif err := g.policy.Permits(target.host, target.port); err != nil {\n\t\tup.Close()\n\t\tg.refuse(w, r, err)\n\t\treturn\n\t}\n"},
		}},

	// Issue 11 findings and issue 10's rules, each with the test that
	// reproduces it.
	{Name: "rooted-name lookup", File: "dial.go", Kills: "TestDialerIgnoresSearchList",
		Edits: []mutation.Edit{{Old: `rooted := host + "."`, New: `rooted := host`}}},
	{Name: "DNS query asks only the name looked up", File: "dial.go", Kills: "TestDialerAsksOnlyTheNameLookedUp",
		Edits: []mutation.Edit{{Old: "if err != nil || len(qs) != 1 || !strings.EqualFold(qs[0].Name.String(), c.asked) {", New: "if false && (err != nil || len(qs) != 1 || !strings.EqualFold(qs[0].Name.String(), c.asked)) {"}}},
	{Name: "DNS error names the resolver dialled", File: "dial.go", Kills: "TestDialerDNSErrorNamesTheResolverDialled",
		Edits: []mutation.Edit{{Old: "if d.server != \"\" {\n\t\t\tde2.Server = d.server", New: "if false {\n\t\t\tde2.Server = d.server"}}},
	{Name: "tunnel closed after the grace", File: "guard.go", Kills: "TestGuardReleasesTunnelsWhenWorkloadCloses|TestGuardReleasesTunnelsWhenDestinationCloses",
		Edits: []mutation.Edit{{Old: "at := time.Now().Add(g.tunnelGrace)", New: "at := time.Now().Add(time.Hour)"}}},
	{Name: "tunnel idle timeout", File: "guard.go", Kills: "TestGuardClosesIdleTunnels",
		Edits: []mutation.Edit{{Old: "d := time.Now().Add(g.tunnelIdle)", New: "d := time.Now().Add(time.Hour)"}}},
	{Name: "an idle tunnel closes at once, without the grace", File: "guard.go", Kills: "TestGuardClosesIdleTunnels",
		Edits: []mutation.Edit{{Old: "if idle {\n\t\tat = time.Now()\n\t}", New: "_ = idle"}}},
	{Name: "tunnel idle means both directions", File: "guard.go", Kills: "TestGuardClosesIdleTunnels",
		Edits: []mutation.Edit{{Old: "if timeout && time.Since(time.Unix(0, t.last.Load())) < g.tunnelIdle {", New: "if timeout && false {"}}},
	{Name: "guard connection cap", File: "guard.go", Kills: "TestGuardAnswersAtLowDescriptorLimit",
		Edits: []mutation.Edit{{Old: "if g.conns.Add(1) > int64(g.maxConns) {", New: "if false {"}}},
	{Name: "guard caps derived from RLIMIT_NOFILE", File: "guard.go", Kills: "TestGuardAnswersAtLowDescriptorLimit",
		Edits: []mutation.Edit{{Old: "descriptorCaps(descriptorLimit())", New: "descriptorCaps(1 << 20)"}}},
	{Name: "tunnel cap per guard", File: "guard.go", Kills: "TestGuardCapsTunnels",
		Edits: []mutation.Edit{{Old: "full, srcFull := g.open >= g.maxTunnels, ", New: "full, srcFull := false, "}}},
	{Name: "tunnel cap per source", File: "guard.go", Kills: "TestGuardCapsTunnels",
		Edits: []mutation.Edit{{Old: ", g.perSource[src] >= g.maxPerSource\n", New: ", false\n"}}},
	{Name: "an idle connection makes no room at the connection cap", File: "guard.go", Kills: "TestGuardReclaimsIdleTunnels",
		Edits: []mutation.Edit{{Old: "if l.g.reclaim(func(*heldConn) bool { return true }) {", New: "if false {"}}},
	{Name: "an idle tunnel makes no room at a tunnel cap", File: "guard.go", Kills: "TestGuardReclaimsIdleTunnels",
		Edits: []mutation.Edit{{Old: "if !reclaimed && g.reclaim(func(c *heldConn) bool {", New: "if !reclaimed && false && g.reclaim(func(c *heldConn) bool {"}}},
	{Name: "a reclaimed tunnel keeps its slot until it ends", File: "guard.go", Kills: "TestGuardReclaimsIdleTunnels",
		Edits: []mutation.Edit{{Old: "\t\tt.release()\n\t\tt.up.Close()\n", New: "\t\tt.up.Close()\n"}}},
	{Name: "a busy tunnel counts as idle", File: "guard.go", Kills: "TestGuardReclaimsIdleTunnels",
		Edits: []mutation.Edit{{Old: "return d, d >= after || t.closeAt.Load() != 0", New: "return d, true"}}},
	{Name: "a tunnel in its close grace is not idle", File: "guard.go", Kills: "TestGuardSurvivesTunnelChurn",
		Edits: []mutation.Edit{{Old: "return d, d >= after || t.closeAt.Load() != 0", New: "return d, d >= after"}}},
	{Name: "idle connections are not trimmed", File: "guard.go", Kills: "TestGuardTrimsIdleKeepAlives",
		Edits: []mutation.Edit{{Old: "idle[:max(len(idle)-g.maxIdle, 0)]", New: "idle[:0]"}}},
	{Name: "the youngest idle connections are trimmed first", File: "guard.go", Kills: "TestGuardTrimsIdleKeepAlives",
		Edits: []mutation.Edit{{Old: "idle[:max(len(idle)-g.maxIdle, 0)]", New: "idle[min(g.maxIdle, len(idle)):]"}}},
	{Name: "a keep-alive between requests is not idle", File: "guard.go", Kills: "TestGuardTrimsIdleKeepAlives",
		Edits: []mutation.Edit{{Old: "\t\thc.idleSince.Store(time.Now().UnixNano())\n", New: ""}}},
	{Name: "the idle cap defaults to the connection cap", File: "guard.go", Kills: "TestGuardIdleCapDefault",
		Edits: []mutation.Edit{{Old: "max(g.maxConns/IdleShare, 1)", New: "g.maxConns"}}},
	{Name: "negative idle bounds refused", File: "guard.go", Kills: "TestNewGuardRefusesNegativeTunnelBounds",
		Edits: []mutation.Edit{{Old: " || cfg.MaxIdleConnections < 0 || cfg.TunnelIdleAfter < 0 {", New: " {"}}},
	{Name: "negative tunnel bounds refused", File: "guard.go", Kills: "TestNewGuardRefusesNegativeTunnelBounds",
		Edits: []mutation.Edit{{Old: "if cfg.TunnelCloseGrace < 0 || cfg.TunnelIdleTimeout < 0 || cfg.MaxTunnels < 0 || cfg.MaxTunnelsPerSource < 0 {", New: "if false {"}}},
	{Name: "no pooling with buffered bytes", File: "forward.go", Kills: "TestGuardNeverServesAStaleResponse",
		Edits: []mutation.Edit{{Old: " && uc.br.Buffered() == 0", New: ""}}},
	{Name: "unsolicited data checked before reuse", File: "forward.go", Kills: "TestGuardNeverServesAStaleResponse",
		Edits: []mutation.Edit{{Old: "if c == nil || c.quiet() {", New: "if true {"}}},
	{Name: "retry only when nothing was read", File: "forward.go", Kills: "TestGuardNeverReplaysAnAnsweredRequest",
		Edits: []mutation.Edit{{Old: "if reused && uc.nread == before && attempt", New: "if reused && before >= 0 && attempt"}}},
	{Name: "retry only idempotent requests", File: "forward.go", Kills: "TestGuardRetriesOnlyIdempotentRequests",
		Edits: []mutation.Edit{{Old: " && idempotent(out.Method) && r.Context", New: " && r.Context"}}},
	{Name: "stale pooled connection retried", File: "forward.go", Kills: "TestGuardRetriesOnlyIdempotentRequests",
		Edits: []mutation.Edit{{Old: "if reused && uc.nread == before && attempt == 0 && out.Body == nil && idempotent(out.Method) && r.Context().Err() == nil {", New: "if false && reused && before > 0 {"}}},
	{Name: "OPTIONS * not answered by net/http", File: "guard.go", Kills: "TestGuardRefusesOptionsStar",
		Edits: []mutation.Edit{{Old: "DisableGeneralOptionsHandler: true, ", New: ""}}},
	{Name: "malformed workload body is a refusal", File: "forward.go", Kills: "TestGuardRefusesMalformedBody",
		Edits: []mutation.Edit{{Old: "if body != nil && body.err != nil {", New: "if false {"}}},
	{Name: "hostile text quoted through checkfu.Quote", File: "canon.go", Kills: "TestHostileTextIsQuotedBounded",
		Edits: []mutation.Edit{{Old: `"egress: host %s %s", checkfu.Quote(s), why)`, New: `"egress: host %q %s", s, why)`}}},

	// The checks the tests' comments used to claim in prose.
	{Name: "refusal omits the path", File: "canon.go", Kills: "TestCanonicalRequestRefusalsOmitPathAndQuery",
		Edits: []mutation.Edit{{Old: `refuseRequest("egress: path %s", why)`, New: `refuseRequest("egress: path %s %s", why, path)`}}},
	{Name: "refusal omits the query", File: "canon.go", Kills: "TestCanonicalRequestRefusalsOmitPathAndQuery",
		Edits: []mutation.Edit{{Old: `refuseRequest("egress: query %s", why)`, New: `refuseRequest("egress: query %s %s", why, u.RawQuery)`}}},
	{Name: "refusal omits an opaque URL", File: "canon.go", Kills: "TestCanonicalRequestRefusalsOmitPathAndQuery",
		Edits: []mutation.Edit{{Old: `refuseRequest("egress: opaque URL (scheme:data without //host) is not allowed")`, New: `refuseRequest("egress: opaque URL %s", u.Opaque)`}}},
	{Name: "overlong escapes", File: "canon.go", Kills: "TestCanonicalRequestRefusesOverlongEscapes",
		Edits: []mutation.Edit{{Old: "case d == 0xC0 || d == 0xC1 || overlongLead(d, p[i+3:]):", New: "case false:"}}},
	{Name: "double encoding", File: "canon.go", Kills: "TestCanonicalRequestRefusesDoubleEncoding",
		Edits: []mutation.Edit{{Old: "case d == '%' && doubleEncoded(p[i+3:]):", New: "case false:"}}},
	{Name: "_method query parameter", File: "canon.go", Kills: "TestQueryMethodOverrideRefused|TestQueryAliasesOfMethodOverride",
		Edits: []mutation.Edit{{Old: "if overridesMethod(name) {", New: "if false && overridesMethod(name) {"}}},
	{Name: "an escaped NUL does not end a query name", File: "canon.go", Kills: "TestQueryMethodOverrideRefused|TestQueryAliasesOfMethodOverride",
		Edits: []mutation.Edit{{Old: "\t\tif c == 0 {\n\t\t\tbreak // PHP reads a name up to a NUL\n\t\t}\n", New: ""}}},
	{Name: "redirect host echoing a credential after folding", File: "client.go", Kills: "TestClientRedirectWithholdsFoldedEcho",
		Edits: []mutation.Edit{{Old: "} else if echoes(next.Host, secrets) {", New: "} else if false {"}}},
	{Name: "credential only over https", File: "client.go", Kills: "TestClientNeverAttachesToPlaintext",
		Edits: []mutation.Edit{{Old: `if attach != nil && creq.Scheme != "https" {`, New: "if false {"}}},
	{Name: "attach error sends nothing", File: "client.go", Kills: "TestClientAttachErrorSendsNothing",
		Edits: []mutation.Edit{{Old: "if err := attach(out.Header); err != nil {\n\t\t\treturn nil, err\n\t\t}", New: "attach(out.Header) //nolint:errcheck"}}},
	{Name: "body closed when refused", File: "client.go", Kills: "TestClientClosesBodyWhenRefused",
		Edits: []mutation.Edit{{Old: "\tif req != nil && req.Body != nil {\n\t\treq.Body.Close()", New: "\tif false && req != nil && req.Body != nil {\n\t\treq.Body.Close()"}}},
	{Name: "body closed when not sent", File: "client.go", Kills: "TestClientClosesBodyWhenRefused|TestSendClosesBodyWhenRefused",
		Edits: []mutation.Edit{{Old: "\t\tif !sent {\n\t\t\ta.closeBody()", New: "\t\tif false && !sent {\n\t\t\ta.closeBody()"}}},
	{Name: "Send leaves the body of what it refuses open", File: "client.go", Kills: "TestSendClosesBodyWhenRefused",
		Edits: []mutation.Edit{{Old: "if _, err := c.rules.Decide(&a.req); err != nil {\n\t\t\ta.closeBody()\n", New: "if _, err := c.rules.Decide(&a.req); err != nil {\n"}}},
	{Name: "guard never relays a destination's refusal header", File: "forward.go", Kills: "TestGuardDoesNotRelayItsOwnHeaders",
		Edits: []mutation.Edit{{Old: "\tdelete(dst, RefusalHeader)\n", New: ""}}},
	{Name: "guard never relays a destination's failure header", File: "forward.go", Kills: "TestGuardDoesNotRelayItsOwnHeaders",
		Edits: []mutation.Edit{{Old: "\tdelete(dst, UpstreamFailureHeader)\n", New: ""}}},
	{Name: "upstream header bounded", File: "forward.go", Kills: "TestGuardBoundsUpstreamHeader",
		Edits: []mutation.Edit{{Old: "uc.lim = maxResponseHeaderBytes", New: "uc.lim = noLimit"}}},
	{Name: "X-Forwarded-* dropped", File: "forward.go", Kills: "TestGuardDropsEveryForwardingClaim",
		Edits: []mutation.Edit{{Old: `if strings.HasPrefix(k, "X-Forwarded-") {`, New: "if false {"}}},
	{Name: "idle pool bounded in total", File: "forward.go", Kills: "TestUpstreamPoolBoundsIdleConnections",
		Edits: []mutation.Edit{{Old: "p.closed || p.n >= p.maxIdle || ", New: "p.closed || "}}},
	{Name: "dialer's reason kept from the workload", File: "guard.go", Kills: "TestGuardRebinding",
		Edits: []mutation.Edit{{Old: "if code == CodeDestinationNotPublic {", New: "if false {"}}},
	{Name: "zero Guard refuses in ServeHTTP", File: "guard.go", Kills: "TestZeroGuardRefuses",
		Edits: []mutation.Edit{{Old: "if g.srv == nil { // the zero Guard: refuse, never forward", New: "if false {"}}},
	{Name: "zero Guard refuses to serve", File: "guard.go", Kills: "TestZeroGuardRefuses",
		Edits: []mutation.Edit{{Old: "if g == nil || g.srv == nil {\n\t\treturn errZeroGuard", New: "if false {\n\t\treturn errZeroGuard"}}},
	{Name: "allowlist hosts canonical", File: "policy.go", Kills: "TestAllowlistNetworkRefuses",
		Edits: []mutation.Edit{{Old: "if c != h {", New: "if false {"}}},
	{Name: "allowlist hosts unique", File: "policy.go", Kills: "TestAllowlistNetworkRefuses",
		Edits: []mutation.Edit{{Old: "if slices.Contains(hosts, c) {", New: "if false {"}}},
}

// tableMutants deletes each row of the classification tables in turn.
func tableMutants(t *testing.T) []mutation.Mutant {
	src, err := os.ReadFile("addr.go")
	if err != nil {
		t.Fatal(err)
	}
	var out []mutation.Mutant
	for _, line := range strings.Split(string(src), "\n") {
		if strings.HasPrefix(line, "\tnetip.MustParsePrefix(") {
			out = append(out, mutation.Mutant{Name: "table row " + strings.TrimSpace(line), File: "addr.go",
				Edits: []mutation.Edit{{Old: line + "\n", New: ""}}, Kills: "TestIsPublic"})
		}
	}
	if len(out) < 20 {
		t.Fatalf("found %d table rows in addr.go; the mutant generator is out of date", len(out))
	}
	return out
}

// forwardingMutants deletes each name of forwardingHeaders in turn: the
// guard must strip every one of them.
func forwardingMutants(t *testing.T) []mutation.Mutant {
	src, err := os.ReadFile("forward.go")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?s)var forwardingHeaders = \[\.\.\.\]string\{(.*?)\}`).FindSubmatch(src)
	if m == nil {
		t.Fatal("forwardingHeaders not found in forward.go; the mutant generator is out of date")
	}
	var out []mutation.Mutant
	for _, name := range regexp.MustCompile(`"[^"]+",`).FindAllString(string(m[1]), -1) {
		out = append(out, mutation.Mutant{Name: "forwarding header " + name, File: "forward.go",
			Edits: []mutation.Edit{{Old: name, New: `"X-Checkfu-Mutant",`}}, Kills: "TestGuardDropsEveryForwardingClaim"})
	}
	if len(out) < 10 {
		t.Fatalf("found %d forwarding headers in forward.go; the mutant generator is out of date", len(out))
	}
	return out
}
