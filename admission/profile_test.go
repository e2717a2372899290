package admission_test

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/admission"
	"github.com/checkfu/checkfu/egress"
)

func TestParseProfileRefuses(t *testing.T) {
	allow := `{"type": "allowlist", "allowed_hosts": ["api.example.com"]}`
	tests := []struct {
		name string
		doc  string
		code checkfu.Code
	}{
		{"unknown member", strings.Replace(profileDoc("", allow), `"name"`, `"nickname": "x", "name"`, 1), admission.CodeProfileInvalid},
		{"case-folded member", strings.Replace(profileDoc("", allow), `"name"`, `"Name"`, 1), admission.CodeProfileInvalid},
		{"repeated member", strings.Replace(profileDoc("", allow), `"name": "p"`, `"name": "p", "name": "q"`, 1), admission.CodeProfileInvalid},
		{"repeated nested member", strings.Replace(profileDoc("", allow), `"cpu_millis": 1000`, `"cpu_millis": 1000, "cpu_millis": 1000`, 1), admission.CodeProfileInvalid},
		{"trailing content", profileDoc("", allow) + ` {}`, admission.CodeProfileInvalid},
		{"not UTF-8", strings.Replace(profileDoc("", allow), `"name": "p"`, "\"name\": \"p\", \"description\": \"\xff\"", 1), admission.CodeProfileInvalid},
		{"too large", strings.Replace(profileDoc("", allow), `"name"`, strings.Repeat(" ", 300<<10)+`"name"`, 1), admission.CodeProfileInvalid},
		{"seventh ecosystem", profileDoc(`["maven"]`, allow), admission.CodeProfileInvalid},
		{"repeated ecosystem", profileDoc(`["pip", "pip"]`, allow), admission.CodeProfileInvalid},
		{"no image digest", strings.Replace(profileDoc("", allow), imageDigest, "latest", 1), admission.CodeProfileInvalid},
		{"requirement on unrestricted", profileDoc("", `{"type": "unrestricted", "required_egress_certification": "security_boundary"}`), admission.CodeProfileInvalid},
		{"requirement unsupported", profileDoc("", `{"type": "allowlist", "allowed_hosts": ["a.example"], "required_egress_certification": "unsupported"}`), admission.CodeProfileInvalid},
		{"wildcard host", profileDoc("", `{"type": "allowlist", "allowed_hosts": ["*.example.com"]}`), admission.CodeProfileInvalid},
		{"too deep", strings.Repeat("[", 40) + strings.Repeat("]", 40), admission.CodeProfileInvalid},
		{"mcp alone", profileDoc("", `{"type": "allowlist", "allow_mcp_servers": true}`), admission.CodeAllowlistReachesNothing},
	}
	for _, tt := range tests {
		_, err := admission.ParseProfile([]byte(tt.doc))
		wantCode(t, tt.name, err, tt.code)
	}
}

// TestNetworkPolicyRefusalNamesTheMember: a refusal inside network_policy
// names the member that is wrong, for the policy type the document
// declares, not a constraint of another type's branch.
func TestNetworkPolicyRefusalNamesTheMember(t *testing.T) {
	for _, tt := range []struct{ policy, want string }{
		{`{"type": "allowlist", "allowed_hosts": ["a.example"], "bogus": 1}`, `"/network_policy": "additionalProperties 'bogus' not allowed"`},
		{`{"type": "allowlist", "allowed_hosts": "a.example"}`, `"/network_policy/allowed_hosts": "expected array, but got string"`},
		{`{"type": "none", "allowed_hosts": ["a.example"]}`, `"/network_policy": "additionalProperties 'allowed_hosts' not allowed"`},
		{`{"type": "wide"}`, `"/network_policy/type": "value must be one of \"none\", \"unrestricted\", \"allowlist\""`},
		{`{}`, `"/network_policy": "missing properties: 'type'"`},
	} {
		_, err := admission.ParseProfile([]byte(profileDoc("", tt.policy)))
		wantCode(t, tt.policy, err, admission.CodeProfileInvalid)
		if err != nil && !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v\nwant it to contain %s", tt.policy, err, tt.want)
		}
	}
}

// TestDepthBound: a deep document is refused for its depth, before the
// schema sees it.
func TestDepthBound(t *testing.T) {
	deep := strings.Replace(profileDoc("", `{"type": "none"}`), `"name": "p"`, `"name": "p", "x": `+strings.Repeat("[", 40)+strings.Repeat("]", 40), 1)
	_, err := admission.ParseProfile([]byte(deep))
	if !errors.Is(err, admission.CodeProfileInvalid) || !strings.Contains(err.Error(), "nested deeper than") {
		t.Errorf("deep document: %v", err)
	}
}

func TestMCPAloneWrapsEgress(t *testing.T) {
	_, err := admission.ParseProfile([]byte(profileDoc("", `{"type": "allowlist", "allow_mcp_servers": true}`)))
	if !errors.Is(err, egress.CodeAllowlistEmpty) {
		t.Errorf("mcp alone: %v does not wrap egress's refusal", err)
	}
}

func TestPackageManagersWithoutEcosystemReachNothing(t *testing.T) {
	p := mustProfile(t, profileDoc("", `{"type": "allowlist", "allow_package_managers": true, "allow_mcp_servers": true}`))
	_, err := admission.Publish(nil, p, nil)
	wantCode(t, "allow_package_managers without ecosystems", err, admission.CodeAllowlistReachesNothing)
}

// TestPinnedDigests: every retained fixture's digest is pinned in
// testdata/digests.txt. A change to the canonical encoding, or an
// optional member that appears when omitted, turns it red.
func TestPinnedDigests(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "digests.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, want, ok := strings.Cut(sc.Text(), " ")
		if !ok || strings.HasPrefix(name, "#") {
			continue
		}
		n++
		p := mustProfile(t, string(readFixture(t, filepath.Join("profiles", name))))
		got, err := p.Digest()
		if err != nil || got != want {
			t.Errorf("%s: digest %s, %v; pinned %s", name, got, err, want)
		}
	}
	if n != 4 {
		t.Fatalf("digests.txt pins %d fixtures, want 4 (a seed loader that finds nothing must fail)", n)
	}
}

// TestOmittedOptionalIsAbsent: the canonical encoding carries no member
// for an omitted optional field (no null, no zero).
func TestOmittedOptionalIsAbsent(t *testing.T) {
	p := mustProfile(t, string(readFixture(t, "profiles/none.json")))
	b, err := p.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"description", "ecosystems", "disk_mib", "timeout_seconds", "allowed_hosts", "required_egress_certification", "null"} {
		if bytes.Contains(b, []byte(m)) {
			t.Errorf("canonical encoding %s holds %q", b, m)
		}
	}
	want := `{"image":{"digest":"` + imageDigest + `","ref":"docker.io/library/debian:12"},"name":"offline","network_policy":{"type":"none"},"resources":{"cpu_millis":1000,"memory_mib":512}}`
	if string(b) != want {
		t.Errorf("canonical encoding\n%s\nwant\n%s", b, want)
	}
}

func TestParseCatalogRefuses(t *testing.T) {
	for name, doc := range map[string]string{
		"unknown member": `{"version": "2026-12-01.1", "hosts": [], "extra": 1}`,
		"case-folded":    `{"Version": "2026-12-01.1", "hosts": []}`,
		"repeated":       `{"version": "2026-12-01.1", "version": "2026-12-01.2", "hosts": []}`,
		"bad version":    `{"version": "latest", "hosts": []}`,
		"bad ecosystem":  `{"version": "2026-12-01.1", "hosts": [{"ecosystem": "maven", "host": "repo.maven.org", "port": 443, "purpose": "x"}]}`,
	} {
		_, err := admission.ParseCatalog([]byte(doc))
		wantCode(t, name, err, admission.CodeCatalogInvalid)
	}
}
