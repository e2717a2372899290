package admission

import (
	"errors"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/egress"
)

type catalogJSON struct {
	Version string             `json:"version"`
	Hosts   []catalogEntryJSON `json:"hosts"`
}

type catalogEntryJSON struct {
	Ecosystem          string   `json:"ecosystem"`
	Host               string   `json:"host"`
	Port               uint16   `json:"port"`
	Purpose            string   `json:"purpose"`
	RedirectsTo        []string `json:"redirects_to,omitempty"`
	RelaysToAnyOrigin  string   `json:"relays_to_any_origin,omitempty"`
	ThirdPartyWritable string   `json:"third_party_writable,omitempty"`
}

// ParseCatalog reads an operator's preset catalog document strictly:
//
//	{"version": "2026-12-01.1", "hosts": [{"ecosystem": "go", "host": "proxy.golang.org", "port": 443,
//	  "purpose": "module proxy", "relays_to_any_origin": "fetches any module path from its origin"}]}
//
// and builds it with egress.NewPresetCatalog. Refusals are
// [CodeCatalogInvalid] (wrapping egress's refusal where it has one).
func ParseCatalog(doc []byte) (*egress.PresetCatalog, error) {
	var cj catalogJSON
	if err := strictUnmarshal(doc, &cj, CodeCatalogInvalid, "preset catalog"); err != nil {
		return nil, err
	}
	hosts := make([]egress.PresetHost, len(cj.Hosts))
	for i, h := range cj.Hosts {
		hosts[i] = egress.PresetHost{Ecosystem: h.Ecosystem, Host: h.Host, Port: h.Port, Purpose: h.Purpose, RedirectsTo: h.RedirectsTo, RelaysToAnyOrigin: h.RelaysToAnyOrigin, ThirdPartyWritable: h.ThirdPartyWritable}
	}
	c, err := egress.NewPresetCatalog(cj.Version, hosts)
	if err != nil {
		var r *checkfu.Refusal
		errors.As(err, &r)
		return nil, &checkfu.Refusal{Code: CodeCatalogInvalid, Message: "admission: preset catalog", Err: r}
	}
	return c, nil
}
