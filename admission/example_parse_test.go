package admission_test

import (
	"fmt"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/admission"
)

// A profile is decoded strictly: sets come back sorted, an unknown member
// is refused, and an allowlist that would reach nothing is refused with
// its own code.
func ExampleParseProfile() {
	const image = `"image": {"ref": "docker.io/library/node:22", "digest": "sha256:1111111111111111111111111111111111111111111111111111111111111111"},
		"resources": {"cpu_millis": 1000, "memory_mib": 512}`
	p, err := admission.ParseProfile([]byte(`{"name": "web", ` + image + `, "ecosystems": ["pip", "npm"],
		"network_policy": {"type": "none"}}`))
	fmt.Println(p.Name, p.Ecosystems, err)

	for _, doc := range []string{
		`{"name": "web", ` + image + `, "network_policy": {"type": "none"}, "privileged": true}`,
		`{"name": "web", ` + image + `, "network_policy": {"type": "allowlist", "allow_mcp_servers": true}}`,
	} {
		_, err := admission.ParseProfile([]byte(doc))
		code, _ := checkfu.CodeOf(err)
		fmt.Println(code)
	}
	// Output:
	// web [npm pip] <nil>
	// profile_invalid
	// allowlist_reaches_nothing
}

// Missing provenance is the adversarial lane; only the exact word
// "trusted" asks for the trusted one.
func ExampleParseLane() {
	for _, s := range []string{"", "adversarial", "trusted", "Trusted"} {
		l, err := admission.ParseLane(s)
		if code, refused := checkfu.CodeOf(err); refused {
			fmt.Printf("%q: %v, refused %s\n", s, l, code)
			continue
		}
		fmt.Printf("%q: %v\n", s, l)
	}
	// Output:
	// "": adversarial
	// "adversarial": adversarial
	// "trusted": trusted
	// "Trusted": adversarial, refused lane_invalid
}

// An operator's preset catalog says, per ecosystem, which exact hosts
// allow_package_managers grants, and warns of hosts that relay to any
// origin.
func ExampleParseCatalog() {
	c, err := admission.ParseCatalog([]byte(`{"version": "2026-12-01.1", "hosts": [
		{"ecosystem": "go", "host": "proxy.golang.org", "port": 443, "purpose": "module proxy",
		 "relays_to_any_origin": "fetches any module path from its origin"}]}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(c.Version())

	_, err = admission.ParseCatalog([]byte(`{"version": "2026-12-01.1", "hosts": [], "extra": 1}`))
	code, _ := checkfu.CodeOf(err)
	fmt.Println(code)
	// Output:
	// 2026-12-01.1
	// catalog_invalid
}
