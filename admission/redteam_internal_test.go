package admission

import (
	"os"
	"strings"
	"testing"
)

// publishedTampered publishes the fixture profile, applies tamper to the
// recorded network policy, recomputes every digest (they are not a
// signature) and returns the document.
func publishedTampered(t *testing.T, fixture string, tamper func(np *publishedPolicy)) []byte {
	t.Helper()
	doc, err := os.ReadFile("testdata/profiles/" + fixture)
	if err != nil {
		t.Fatal(err)
	}
	p, err := ParseProfile(doc)
	if err != nil {
		t.Fatal(err)
	}
	v, err := Publish(nil, p, nil)
	if err != nil {
		t.Fatal(err)
	}
	j := v.j
	j.NetworkPolicy.AllowedHosts = v.Hosts()
	tamper(&j.NetworkPolicy)
	if err := j.seal(p); err != nil {
		t.Fatal(err)
	}
	b, err := marshalNoEscape(j)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestParsePublishedRefusesForgedPresetHost: an allow_package_managers
// grant claims the catalog produced the host. Someone editing a stored
// version can add any host under that grant for a declared ecosystem and
// reseal the digests; ParsePublished must check the claim against the
// catalog that the version names, not only against the profile.
func TestParsePublishedRefusesForgedPresetHost(t *testing.T) {
	tampers := map[string]func(np *publishedPolicy){
		"preset host added for a declared ecosystem": func(np *publishedPolicy) {
			np.AllowedHosts = append(np.AllowedHosts, HostGrant{Host: "zz-exfil.example", Port: 443, GrantedBy: []Grant{GrantAllowPackageManagers}, Ecosystems: []string{"pip"}})
		},
		"preset host's port changed": func(np *publishedPolicy) {
			for i, h := range np.AllowedHosts {
				if h.Host == "files.pythonhosted.org" {
					np.AllowedHosts[i].Port = 8443
				}
			}
		},
		"preset host relabelled to another ecosystem": func(np *publishedPolicy) {
			for i, h := range np.AllowedHosts {
				if h.Host == "files.pythonhosted.org" {
					np.AllowedHosts[i].Ecosystems = []string{"apt"}
				}
			}
		},
		"preset host dropped": func(np *publishedPolicy) {
			for i, h := range np.AllowedHosts {
				if h.Host == "files.pythonhosted.org" {
					np.AllowedHosts = append(np.AllowedHosts[:i], np.AllowedHosts[i+1:]...)
					break
				}
			}
		},
		"catalog version replaced": func(np *publishedPolicy) { np.PresetCatalogVersion = "2099-01-01.1" },
	}
	for name, tamper := range tampers {
		b := publishedTampered(t, "python.json", tamper)
		if _, err := ParsePublished(b); !errorsIs(err, CodePublishedInvalid) {
			t.Errorf("%s: ParsePublished = %v, want %s", name, err, CodePublishedInvalid)
		}
	}
}

// TestParsePublishedRefusesDroppedRelay: the relay warning is what makes
// the adversarial lane refuse proxy.golang.org granted by preset only. It
// is covered by no digest, so dropping it from a stored version must be
// caught by ParsePublished, or the lane check silently passes.
func TestParsePublishedRefusesDroppedRelay(t *testing.T) {
	tampers := map[string]func(np *publishedPolicy){
		"relay reason dropped": func(np *publishedPolicy) {
			for i := range np.AllowedHosts {
				np.AllowedHosts[i].RelaysToAnyOrigin = ""
			}
		},
		"relay reason replaced by hostile text": func(np *publishedPolicy) {
			for i := range np.AllowedHosts {
				if np.AllowedHosts[i].RelaysToAnyOrigin != "" {
					np.AllowedHosts[i].RelaysToAnyOrigin = "\x1b[2J" + strings.Repeat("A", 100000)
				}
			}
		},
	}
	for name, tamper := range tampers {
		b := publishedTampered(t, "go.json", tamper)
		if _, err := ParsePublished(b); !errorsIs(err, CodePublishedInvalid) {
			t.Errorf("%s: ParsePublished = %v, want %s", name, err, CodePublishedInvalid)
		}
	}
}
