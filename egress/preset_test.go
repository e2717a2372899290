package egress_test

import (
	"errors"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/checkfu/checkfu/egress"
)

// sharedTenant lists suffixes of hosts many unrelated parties publish
// under; a preset granting one would let a workload reach any of them.
var sharedTenant = []string{
	"storage.googleapis.com", "googleusercontent.com", "githubusercontent.com", "github.io",
	"amazonaws.com", "cloudfront.net", "blob.core.windows.net", "azureedge.net",
	"fastly.net", "fastlylb.net", "r2.dev", "digitaloceanspaces.com", "backblazeb2.com", "pages.dev",
}

func TestPresetCatalog(t *testing.T) {
	c := egress.DefaultPresetCatalog()
	if !regexp.MustCompile(`^20\d\d-\d\d-\d\d\.\d+$`).MatchString(c.Version()) {
		t.Errorf("catalog version %q is not YYYY-MM-DD.N", c.Version())
	}
	seen := map[string]bool{}
	hostSet := map[string]bool{}
	for _, h := range c.Hosts() {
		hostSet[h.Host] = true
	}
	for _, h := range c.Hosts() {
		seen[h.Ecosystem] = true
		if !slices.Contains(egress.PresetEcosystems(), h.Ecosystem) {
			t.Errorf("%s: ecosystem %q is not one of %v", h, h.Ecosystem, egress.PresetEcosystems())
		}
		if got, err := egress.CanonicalHost(h.Host); err != nil || got != h.Host {
			t.Errorf("%s: host is not canonical (%q, %v)", h, got, err)
		}
		if h.Port == 0 {
			t.Errorf("%s: no port", h)
		}
		for _, s := range sharedTenant {
			if h.Host == s || strings.HasSuffix(h.Host, "."+s) {
				t.Errorf("%s: shared-tenant host", h)
			}
		}
		for _, r := range h.RedirectsTo {
			if !hostSet[r] {
				t.Errorf("%s: redirect target %q is not in the catalog", h, r)
			}
		}
		if h.Purpose == "" {
			t.Errorf("%s: no purpose", h)
		}
	}
	for _, e := range egress.PresetEcosystems() {
		if !seen[e] {
			t.Errorf("ecosystem %q has no host", e)
		}
	}
	// Hosts returns a copy.
	hs := c.Hosts()
	hs[0].Host = "evil.example.com"
	if c.Hosts()[0].Host == "evil.example.com" {
		t.Errorf("Hosts exposes the catalog's storage")
	}
}

func TestPresetRelaysMarked(t *testing.T) {
	for _, h := range egress.DefaultPresetCatalog().Hosts() {
		want := h.Host == "proxy.golang.org" || h.Host == "sum.golang.org"
		if got := h.RelaysToAnyOrigin != ""; got != want {
			t.Errorf("%s: relays_to_any_origin marked %v, want %v", h, got, want)
		}
	}
}

// TestPresetThirdPartyWritableMarked: every host where any account can
// publish what the host serves to anyone is marked, with its reason; the
// distribution archives, written by their own maintainers, are not.
func TestPresetThirdPartyWritableMarked(t *testing.T) {
	for _, h := range egress.DefaultPresetCatalog().Hosts() {
		want := h.Ecosystem != "apt"
		if got := h.ThirdPartyWritable != ""; got != want {
			t.Errorf("%s: third_party_writable marked %v, want %v", h, got, want)
		}
	}
}

func TestNewPresetCatalog(t *testing.T) {
	good := egress.PresetHost{Ecosystem: "npm", Host: "registry.npmjs.org", Port: 443, Purpose: "registry"}
	c, err := egress.NewPresetCatalog("2026-12-01.1", []egress.PresetHost{good})
	if err != nil || c.Version() != "2026-12-01.1" || len(c.Hosts()) != 1 {
		t.Fatalf("NewPresetCatalog(good) = %v, %v", c, err)
	}
	bad := map[string]func(*egress.PresetHost) string{
		"version":   func(*egress.PresetHost) string { return "2026-12-01" },
		"ecosystem": func(h *egress.PresetHost) string { h.Ecosystem = "maven"; return "" },
		"host":      func(h *egress.PresetHost) string { h.Host = "Registry.npmjs.org"; return "" },
		"port":      func(h *egress.PresetHost) string { h.Port = 0; return "" },
		"purpose":   func(h *egress.PresetHost) string { h.Purpose = ""; return "" },
		"redirect":  func(h *egress.PresetHost) string { h.RedirectsTo = []string{"evil.example"}; return "" },
	}
	for name, mutate := range bad {
		h := good
		v := mutate(&h)
		if v == "" {
			v = "2026-12-01.1"
		}
		if _, err := egress.NewPresetCatalog(v, []egress.PresetHost{h}); !errors.Is(err, egress.CodePolicyInvalid) {
			t.Errorf("%s: NewPresetCatalog = %v, want %s", name, err, egress.CodePolicyInvalid)
		}
	}
	if _, err := egress.NewPresetCatalog("2026-12-01.1", []egress.PresetHost{good, good}); !errors.Is(err, egress.CodePolicyInvalid) {
		t.Errorf("duplicate: NewPresetCatalog = %v", err)
	}
}
