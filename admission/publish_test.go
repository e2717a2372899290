package admission_test

import (
	"bytes"
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/checkfu/checkfu/admission"
	"github.com/checkfu/checkfu/egress"
)

func hostStrings(hs []admission.HostGrant) []string {
	var out []string
	for _, h := range hs {
		out = append(out, h.String())
	}
	return out
}

func TestPublishExpandsDeclaredEcosystemsOnly(t *testing.T) {
	v := mustPublish(t, nil, string(readFixture(t, "profiles/python.json")))
	want := []string{"api.example.com:443", "archive.ubuntu.com:80", "deb.debian.org:80", "deb.debian.org:443",
		"files.pythonhosted.org:443", "pypi.org:443", "security.debian.org:80", "security.ubuntu.com:80"}
	if got := hostStrings(v.Hosts()); !slices.Equal(got, want) {
		t.Errorf("hosts = %v\nwant   %v", got, want)
	}
	for _, h := range v.Hosts() {
		var want []admission.Grant
		switch h.Host {
		case "api.example.com":
			want = []admission.Grant{admission.GrantAllowedHosts}
		case "pypi.org":
			want = []admission.Grant{admission.GrantAllowPackageManagers, admission.GrantAllowedHosts}
		default:
			want = []admission.Grant{admission.GrantAllowPackageManagers}
		}
		if !slices.Equal(h.GrantedBy, want) {
			t.Errorf("%s granted by %v, want %v", h, h.GrantedBy, want)
		}
	}
	if v.CatalogVersion() != egress.DefaultPresetCatalog().Version() || v.Version() != 1 {
		t.Errorf("catalog %q version %d", v.CatalogVersion(), v.Version())
	}
	if len(v.Relays()) != 0 {
		t.Errorf("python profile warns of relays %v", v.Relays())
	}
	// Enforcement sees exact hosts only: no flag survives the compile.
	c, err := v.CompiledPolicy()
	if err != nil {
		t.Fatal(err)
	}
	doc, _ := c.MarshalJSON()
	if strings.Contains(string(doc), "allow_") || c.PresetCatalogVersion() != "" || len(c.AllowedHosts()) != len(want) {
		t.Errorf("compiled policy %s carries a flag or lost a host", doc)
	}
}

func TestPublishMarksRelays(t *testing.T) {
	v := mustPublish(t, nil, string(readFixture(t, "profiles/go.json")))
	got := hostStrings(v.Relays())
	if !slices.Equal(got, []string{"proxy.golang.org:443", "sum.golang.org:443"}) {
		t.Errorf("relays = %v", got)
	}
	for _, r := range v.Relays() {
		if r.RelaysToAnyOrigin == "" || r.ByHand() {
			t.Errorf("%s: reason %q, by hand %v", r, r.RelaysToAnyOrigin, r.ByHand())
		}
	}
}

// TestPublishMarksThirdPartyWritable: every host of the catalog where
// any account publishes what the host serves is marked in the compiled
// profile, with the catalog's reason, whether allow_package_managers
// granted it or the profile named it by hand; a distribution archive is
// not; and a stored version with a mark dropped is refused.
func TestPublishMarksThirdPartyWritable(t *testing.T) {
	v := mustPublish(t, nil, profileDoc(`["apt", "cargo", "gem", "go", "npm", "pip"]`, `{"type": "allowlist", "allow_package_managers": true}`))
	marked := 0
	for _, h := range v.Hosts() {
		apt := slices.Equal(h.Ecosystems, []string{"apt"})
		if (h.ThirdPartyWritable == "") != apt {
			t.Errorf("%s (%v): third_party_writable %q", h, h.Ecosystems, h.ThirdPartyWritable)
		}
		if h.ThirdPartyWritable != "" {
			marked++
		}
	}
	if marked != 10 {
		t.Errorf("%d hosts marked third-party writable, want the 10 non-apt presets", marked)
	}
	byHand := mustPublish(t, nil, profileDoc("", `{"type": "allowlist", "allowed_hosts": ["registry.npmjs.org", "api.example.com"]}`))
	for _, h := range byHand.Hosts() {
		if want := h.Host == "registry.npmjs.org"; (h.ThirdPartyWritable != "") != want {
			t.Errorf("named by hand: %s third_party_writable %q", h, h.ThirdPartyWritable)
		}
	}
	if byHand.CatalogVersion() == "" {
		t.Error("a mark from the catalog recorded no catalog version")
	}
	doc, err := byHand.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	dropped := regexp.MustCompile(`,"third_party_writable":"[^"]*"`).ReplaceAll(doc, nil)
	if bytes.Equal(dropped, doc) {
		t.Fatalf("no mark to drop in %s", doc)
	}
	_, err = admission.ParsePublished(dropped)
	wantCode(t, "a stored version with the mark dropped", err, admission.CodePublishedInvalid)
}

// TestCatalogVersionRecordedForUnmarkedPresets: preset hosts that carry
// no mark (the distribution archives) still record the catalog version
// that granted them.
func TestCatalogVersionRecordedForUnmarkedPresets(t *testing.T) {
	v := mustPublish(t, nil, profileDoc(`["apt"]`, `{"type": "allowlist", "allow_package_managers": true}`))
	if v.CatalogVersion() != egress.DefaultPresetCatalog().Version() {
		t.Errorf("apt presets recorded catalog version %q, want %q", v.CatalogVersion(), egress.DefaultPresetCatalog().Version())
	}
}

func TestNewCatalogIsANewVersion(t *testing.T) {
	p := mustProfile(t, string(readFixture(t, "profiles/python.json")))
	v1, err := admission.Publish(nil, p, nil)
	if err != nil {
		t.Fatal(err)
	}
	hosts := egress.DefaultPresetCatalog().Hosts()
	hosts = append(hosts, egress.PresetHost{Ecosystem: "pip", Host: "pypi.python.org", Port: 443, Purpose: "legacy index"})
	next, err := egress.NewPresetCatalog("2026-12-01.1", hosts)
	if err != nil {
		t.Fatal(err)
	}
	v2, err := admission.Publish(v1, p, next)
	if err != nil {
		t.Fatal(err)
	}
	if v2.Version() != 2 || v2.CatalogVersion() != "2026-12-01.1" || v2.NetworkPolicyHash() == v1.NetworkPolicyHash() || v2.DerivedImageDigest() == v1.DerivedImageDigest() {
		t.Errorf("adopting a catalog: version %d catalog %s, hashes changed %v %v", v2.Version(), v2.CatalogVersion(),
			v2.NetworkPolicyHash() != v1.NetworkPolicyHash(), v2.DerivedImageDigest() != v1.DerivedImageDigest())
	}
	// v1 is untouched.
	if v1.Version() != 1 || v1.CatalogVersion() != egress.DefaultPresetCatalog().Version() || slices.Contains(hostStrings(v1.Hosts()), "pypi.python.org:443") {
		t.Errorf("publishing v2 edited v1")
	}
	d := admission.DiffVersions(v1, v2)
	if !d.Widens() || !slices.Equal(hostStrings(d.Widened), []string{"pypi.python.org:443"}) || len(d.Narrowed) != 0 {
		t.Errorf("diff = %+v", d)
	}
	back := admission.DiffVersions(v2, v1)
	if back.Widens() || len(back.Narrowed) != 1 {
		t.Errorf("reverse diff = %+v", back)
	}
	// The same catalog again is no new version.
	if v3, err := admission.Publish(v2, p, next); err != nil || v3 != v2 {
		t.Errorf("republish = %v, %v; want v2 itself", v3, err)
	}
}

func TestDiffWidensOnTypeAndRequirement(t *testing.T) {
	a := mustPublish(t, nil, profileDoc("", `{"type": "allowlist", "allowed_hosts": ["a.example"], "required_egress_certification": "security_boundary"}`))
	b := mustPublish(t, a, profileDoc("", `{"type": "allowlist", "allowed_hosts": ["a.example"]}`))
	if d := admission.DiffVersions(a, b); !d.Widens() {
		t.Errorf("lowering the requirement does not widen: %+v", d)
	}
	c := mustPublish(t, b, profileDoc("", `{"type": "unrestricted"}`))
	if d := admission.DiffVersions(b, c); !d.Widens() {
		t.Errorf("allowlist to unrestricted does not widen: %+v", d)
	}
	if d := admission.DiffVersions(c, b); d.Widens() {
		t.Errorf("unrestricted to allowlist widens: %+v", d)
	}
}

func TestPublishVersionConflict(t *testing.T) {
	a := mustPublish(t, nil, profileDoc("", `{"type": "none"}`))
	other := mustProfile(t, strings.Replace(profileDoc("", `{"type": "none"}`), `"name": "p"`, `"name": "q"`, 1))
	_, err := admission.Publish(a, other, nil)
	wantCode(t, "other profile's version", err, admission.CodeVersionConflict)
}

func TestParsePublishedRoundTripAndTamper(t *testing.T) {
	v := mustPublish(t, nil, string(readFixture(t, "profiles/python.json")))
	doc, err := v.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	back, err := admission.ParsePublished(doc)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := back.MarshalJSON()
	if string(again) != string(doc) {
		t.Errorf("round trip changed the document")
	}
	tampers := map[string]func(m map[string]any){
		"extra host": func(m map[string]any) {
			np := m["network_policy"].(map[string]any)
			np["allowed_hosts"] = append(np["allowed_hosts"].([]any), map[string]any{"host": "zz.example", "port": 443, "granted_by": []any{"allow_package_managers"}, "ecosystems": []any{"pip"}})
		},
		"grant flipped": func(m map[string]any) {
			h := m["network_policy"].(map[string]any)["allowed_hosts"].([]any)[0].(map[string]any)
			h["granted_by"] = []any{"allow_package_managers"}
		},
		"hash":    func(m map[string]any) { m["network_policy_hash"] = "sha256:" + strings.Repeat("0", 64) },
		"image":   func(m map[string]any) { m["derived_image_digest"] = "sha256:" + strings.Repeat("0", 64) },
		"digest":  func(m map[string]any) { m["profile_digest"] = "sha256:" + strings.Repeat("0", 64) },
		"version": func(m map[string]any) { m["version"] = 0 },
		"catalog": func(m map[string]any) { delete(m["network_policy"].(map[string]any), "preset_catalog_version") },
		"relay on hand-written": func(m map[string]any) {
			h := m["network_policy"].(map[string]any)["allowed_hosts"].([]any)[0].(map[string]any)
			h["relays_to_any_origin"] = "x"
		},
		"undeclared ecosystem": func(m map[string]any) {
			h := m["network_policy"].(map[string]any)["allowed_hosts"].([]any)[1].(map[string]any)
			h["ecosystems"] = []any{"npm"}
		},
	}
	for name, tamper := range tampers {
		var m map[string]any
		if err := json.Unmarshal(doc, &m); err != nil {
			t.Fatal(err)
		}
		tamper(m)
		b, _ := json.Marshal(m)
		_, err := admission.ParsePublished(b)
		wantCode(t, name, err, admission.CodePublishedInvalid)
	}
}
