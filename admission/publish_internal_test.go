package admission

import (
	"os"
	"testing"

	"github.com/checkfu/checkfu"
)

// TestParsePublishedResealed: the digests of a published version are not
// a signature; anyone can recompute them. ParsePublished must refuse a
// version whose recorded expansion disagrees with its profile even when
// every digest has been recomputed to match.
func TestParsePublishedResealed(t *testing.T) {
	doc, err := os.ReadFile("testdata/profiles/python.json")
	if err != nil {
		t.Fatal(err)
	}
	p, err := ParseProfile(doc)
	if err != nil {
		t.Fatal(err)
	}
	tampers := map[string]func(np *publishedPolicy){
		"catalog version dropped": func(np *publishedPolicy) { np.PresetCatalogVersion = "" },
		"hand grant added to a preset host": func(np *publishedPolicy) {
			h := &np.AllowedHosts[len(np.AllowedHosts)-1] // security.ubuntu.com:80, preset only
			h.GrantedBy = []Grant{GrantAllowPackageManagers, GrantAllowedHosts}
		},
		"hand-written host dropped": func(np *publishedPolicy) { np.AllowedHosts = np.AllowedHosts[1:] },
		"host for an undeclared ecosystem": func(np *publishedPolicy) {
			np.AllowedHosts = append(np.AllowedHosts, HostGrant{Host: "zz.example", Port: 443, GrantedBy: []Grant{GrantAllowPackageManagers}, Ecosystems: []string{"npm"}})
		},
		"requirement changed": func(np *publishedPolicy) { np.RequiredEgressCertification = checkfu.RequireSecurityBoundary },
		"not canonical host": func(np *publishedPolicy) {
			np.AllowedHosts = append(np.AllowedHosts, HostGrant{Host: "ZZ.example", Port: 443, GrantedBy: []Grant{GrantAllowPackageManagers}, Ecosystems: []string{"pip"}})
		},
	}
	for name, tamper := range tampers {
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
		b, _ := marshalNoEscape(j)
		if _, err := ParsePublished(b); !errorsIs(err, CodePublishedInvalid) {
			t.Errorf("%s: ParsePublished = %v, want %s", name, err, CodePublishedInvalid)
		}
	}
}

func errorsIs(err error, code checkfu.Code) bool {
	c, ok := checkfu.CodeOf(err)
	return ok && c == code
}
