package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// decodeOne decodes stdout as exactly one JSON object into v.
func decodeOne(t *testing.T, what, stdout string, v any) {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(stdout))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("%s: stdout is not the JSON object: %v\n%s", what, err, stdout)
	}
	if dec.More() {
		t.Fatalf("%s: stdout holds more than one JSON value:\n%s", what, stdout)
	}
}

// TestJSONOutputs runs "profile publish -json", "profile select -json"
// and "matrix -json" as black boxes and decodes what they print.
func TestJSONOutputs(t *testing.T) {
	dir := t.TempDir()
	in := writeFile(t, dir, "p.json", `{"name": "go-build", `+cliImage+`, "ecosystems": ["go"], "network_policy": {"type": "allowlist", "allowed_hosts": ["api.example.com"], "allow_package_managers": true}}`)
	pub := filepath.Join(dir, "p.pub.json")
	stdout, stderr, code := runBinary(t, "", "profile", "publish", "-json", "-in", in, "-out", pub)
	if code != exitOK {
		t.Fatalf("profile publish -json: exit %d, stderr %q", code, stderr)
	}
	var p publishedJSON
	decodeOne(t, "profile publish -json", stdout, &p)
	if p.Profile != "go-build" || p.Version != 1 || p.NetworkPolicy != "allowlist" || p.Unchanged ||
		!strings.HasPrefix(p.NetworkPolicyHash, "sha256:") || p.CatalogVersion == "" || len(p.Hosts) < 2 {
		t.Errorf("profile publish -json = %+v", p)
	}
	var relays bool
	for _, h := range p.Hosts {
		if h.Host == "proxy.golang.org" && h.Port == 443 && h.RelaysToAnyOrigin != "" && len(h.Ecosystems) == 1 {
			relays = true
		}
	}
	if !relays || !strings.Contains(stderr, "warning: proxy.golang.org:443 relays to any origin") {
		t.Errorf("profile publish -json: the relaying host is missing (hosts %+v, stderr %q)", p.Hosts, stderr)
	}
	stdout, _, code = runBinary(t, "", "profile", "publish", "-json", "-in", in, "-prev", pub, "-out", filepath.Join(dir, "again.json"))
	decodeOne(t, "profile publish -json again", stdout, &p)
	if code != exitOK || !p.Unchanged || p.Version != 1 {
		t.Errorf("republishing the same profile: exit %d, %+v; want unchanged version 1", code, p)
	}

	providers := writeFile(t, dir, "providers.json", `{"providers": [
		{"provider": "partner:vm", "provider_revision": "7", "egress_certification": "unsupported"},
		{"provider": "checkfu:docker-provider", "provider_revision": "3", "egress_certification": "advisory_filter", "enforcement": {"network_policy": "provider_attested"}}]}`)
	stdout, stderr, code = runBinary(t, "", "profile", "select", "-json", "-profile", pub, "-providers", providers)
	var s selectionJSON
	decodeOne(t, "profile select -json", stdout, &s)
	if code != exitOK || s.Selected == nil || *s.Selected != (pairJSON{"checkfu:docker-provider", "3"}) || s.Code != "" || len(s.Candidates) != 2 ||
		s.Candidates[0].Code != "egress_certification_unsatisfied" || s.Candidates[0].Grade.String() != "unsupported" || s.Candidates[1].Code != "" {
		t.Errorf("profile select -json: exit %d, %+v (stderr %q)", code, s, stderr)
	}
	strict := writeFile(t, dir, "b.json", `{"name": "strict", `+cliImage+`, "network_policy": {"type": "allowlist", "allowed_hosts": ["api.example.com"], "required_egress_certification": "security_boundary"}}`)
	spub := filepath.Join(dir, "b.pub.json")
	if _, stderr, code := runBinary(t, "", "profile", "publish", "-in", strict, "-out", spub); code != exitOK {
		t.Fatalf("publish strict: %s", stderr)
	}
	stdout, stderr, code = runBinary(t, "", "profile", "select", "-json", "-profile", spub, "-providers", providers)
	s = selectionJSON{}
	decodeOne(t, "profile select -json (none qualifies)", stdout, &s)
	if code != exitFailed || s.Selected != nil || s.Code != "provider_unavailable" || !strings.Contains(stderr, "code: provider_unavailable") {
		t.Errorf("profile select -json, none qualifying: exit %d, %+v, stderr %q", code, s, stderr)
	}

	stdout, stderr, code = runBinary(t, "", "matrix", "-json", "-provider", "checkfu:e2b-provider", "-out", filepath.Join(dir, "x.json"))
	var m matrixSummary
	decodeOne(t, "matrix -json", stdout, &m)
	if code != exitFailed || m.Provider != "checkfu:e2b-provider" || m.Ceiling != "advisory_filter" || m.Cannot["authority_separation"] == "" || m.Complete ||
		!strings.Contains(stderr, "code: provider_incapable") {
		t.Errorf("matrix -json of an incapable provider: exit %d, %+v, stderr %q", code, m, stderr)
	}
}
