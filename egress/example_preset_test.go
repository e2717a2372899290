package egress_test

import (
	"fmt"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/egress"
)

// An operator ships a reviewed catalog of their own; a redirect target
// the catalog does not hold is refused, since it would be refused at
// run time anyway.
func ExampleNewPresetCatalog() {
	c, err := egress.NewPresetCatalog("2026-12-01.1", []egress.PresetHost{
		{Ecosystem: "pip", Host: "pypi.org", Port: 443, Purpose: "package index", RedirectsTo: []string{"files.pythonhosted.org"}},
		{Ecosystem: "pip", Host: "files.pythonhosted.org", Port: 443, Purpose: "package files"},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, h := range c.Hosts() {
		fmt.Println(h.Ecosystem, h.Host, h.Port)
	}

	_, err = egress.NewPresetCatalog("2026-12-01.1", []egress.PresetHost{
		{Ecosystem: "pip", Host: "pypi.org", Port: 443, Purpose: "package index", RedirectsTo: []string{"files.pythonhosted.org"}},
	})
	code, _ := checkfu.CodeOf(err)
	fmt.Println(code)
	// Output:
	// pip files.pythonhosted.org 443
	// pip pypi.org 443
	// policy_invalid
}
