// Command compileprofile compiles a SandboxProfile into a published
// version, the form admission and every provider work from: the
// conveniences allow_package_managers and allow_mcp_servers are compiled
// away, and only exact hosts remain, each with the grant that put it
// there, the preset catalog version that produced them, and the digests
// that pin the result.
//
// It also shows that allow_mcp_servers grants no host (the same profile
// without it enforces the same policy, with the same hash), that
// publishing the same profile again makes no new version, and the
// refusals, with their codes, for profiles that cannot be published.
//
//	go run ./examples/compileprofile
package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/admission"
	"github.com/checkfu/checkfu/egress"
)

// profile returns a SandboxProfile document with the given network policy.
func profile(ecosystems, networkPolicy string) []byte {
	return []byte(`{
	"name": "build-and-test",
	"image": {"ref": "docker.io/library/golang:1.26", "digest": "sha256:1111111111111111111111111111111111111111111111111111111111111111"},
	"resources": {"cpu_millis": 2000, "memory_mib": 2048},
	"ecosystems": ` + ecosystems + `,
	"network_policy": ` + networkPolicy + `
}`)
}

// The profile this example compiles: one host by hand (and one that the
// npm preset also grants), the package managers of go and npm, and MCP
// servers.
var withMCP = profile(`["go", "npm"]`, `{"type": "allowlist",
	"allowed_hosts": ["api.example.com", "registry.npmjs.org"],
	"allow_package_managers": true, "allow_mcp_servers": true}`)

// withoutMCP is the same profile without allow_mcp_servers.
var withoutMCP = profile(`["go", "npm"]`, `{"type": "allowlist",
	"allowed_hosts": ["api.example.com", "registry.npmjs.org"],
	"allow_package_managers": true}`)

func main() {
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

func run(out io.Writer) error {
	catalog := egress.DefaultPresetCatalog()
	v, err := publish(nil, withMCP, catalog)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "published %s version %d, preset catalog %s, policy %s\n", v.Name(), v.Version(), v.CatalogVersion(), v.PolicyType())
	fmt.Fprintln(out, "exact hosts, each with what granted it:")
	for _, h := range v.Hosts() {
		line := fmt.Sprintf("  %-28s granted by %s", h, joinGrants(h.GrantedBy))
		if len(h.Ecosystems) > 0 {
			line += " (" + strings.Join(h.Ecosystems, ", ") + ")"
		}
		if h.RelaysToAnyOrigin != "" {
			line += "\n  " + strings.Repeat(" ", 28) + " warning: relays to any origin"
		}
		if h.ThirdPartyWritable != "" {
			line += "\n  " + strings.Repeat(" ", 28) + " warning: third-party writable"
		}
		fmt.Fprintln(out, line)
	}
	fmt.Fprintln(out, "digests:")
	fmt.Fprintf(out, "  profile_digest       %s\n", v.ProfileDigest())
	fmt.Fprintf(out, "  network_policy_hash  %s\n", v.NetworkPolicyHash())
	fmt.Fprintf(out, "  derived_image_digest %s\n", v.DerivedImageDigest())

	// allow_mcp_servers grants no workload host: MCP calls cross the
	// capability gateway. Without it the enforced policy is the same.
	w, err := publish(nil, withoutMCP, catalog)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "without allow_mcp_servers: %d hosts, same network_policy_hash: %t, same profile_digest: %t\n",
		len(w.Hosts()), w.NetworkPolicyHash() == v.NetworkPolicyHash(), w.ProfileDigest() == v.ProfileDigest())

	// Publishing is idempotent: the same input makes no new version.
	again, err := publish(v, withMCP, catalog)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "republished unchanged: version %d (the same version: %t)\n", again.Version(), again == v)

	fmt.Fprintln(out, "refused:")
	for _, bad := range []struct {
		what string
		doc  []byte
	}{
		{"allow_mcp_servers alone", profile(`["go"]`, `{"type": "allowlist", "allow_mcp_servers": true}`)},
		{"package managers of no catalogued host", profile(`[]`, `{"type": "allowlist", "allow_package_managers": true}`)},
		{"a wildcard host", profile(`["go"]`, `{"type": "allowlist", "allowed_hosts": ["*.example.com"]}`)},
		{"an unknown member", bytes.Replace(withoutMCP, []byte("{"), []byte(`{"privileged": true,`), 1)},
	} {
		_, err := publish(nil, bad.doc, catalog)
		var r *checkfu.Refusal
		if !errors.As(err, &r) {
			return fmt.Errorf("%s: want a refusal, got %v", bad.what, err)
		}
		fmt.Fprintf(out, "  %-40s %s\n", bad.what+":", r.Code)
		for ; r != nil; r, _ = r.Err.(*checkfu.Refusal) {
			fmt.Fprintf(out, "    %s\n", r.Message)
		}
	}
	return nil
}

// publish parses doc and publishes it after prev against catalog.
func publish(prev *admission.Published, doc []byte, catalog *egress.PresetCatalog) (*admission.Published, error) {
	p, err := admission.ParseProfile(doc)
	if err != nil {
		return nil, err
	}
	return admission.Publish(prev, p, catalog)
}

func joinGrants(gs []admission.Grant) string {
	s := make([]string, len(gs))
	for i, g := range gs {
		s[i] = string(g)
	}
	return strings.Join(s, " + ")
}
