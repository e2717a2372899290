package main

import (
	"bytes"
	"go/parser"
	"go/token"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestRun runs the example and checks the hosts, their grants, the
// digests and the refusals it prints.
func TestRun(t *testing.T) {
	var out bytes.Buffer
	if err := run(&out); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	got := out.String()
	for _, want := range []string{
		"published build-and-test version 1, preset catalog 2026-11-30.1, policy allowlist\n",
		"  api.example.com:443          granted by allowed_hosts\n",
		"  proxy.golang.org:443         granted by allow_package_managers (go)\n",
		"  registry.npmjs.org:443       granted by allow_package_managers + allowed_hosts (npm)\n",
		"  sum.golang.org:443           granted by allow_package_managers (go)\n",
		"without allow_mcp_servers: 4 hosts, same network_policy_hash: true, same profile_digest: false\n",
		"republished unchanged: version 1 (the same version: true)\n",
		"  allow_mcp_servers alone:                 allowlist_reaches_nothing\n",
		"  package managers of no catalogued host:  allowlist_reaches_nothing\n",
		"  a wildcard host:                         profile_invalid\n",
		`egress: allowed host "*.example.com" must be an exact DNS name`,
		"  an unknown member:                       profile_invalid\n",
		`'privileged' not allowed`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	// Exactly the four hosts: allow_mcp_servers added none.
	if n := strings.Count(got, " granted by "); n != 4 {
		t.Errorf("%d hosts printed, want 4:\n%s", n, got)
	}
	if n := strings.Count(got, "warning: relays to any origin"); n != 2 {
		t.Errorf("%d relay warnings, want 2 (the go module proxy and checksum database):\n%s", n, got)
	}
	for _, name := range []string{"profile_digest", "network_policy_hash", "derived_image_digest"} {
		if !regexp.MustCompile(`(?m)^  ` + name + ` +sha256:[0-9a-f]{64}$`).MatchString(got) {
			t.Errorf("no %s digest in the output:\n%s", name, got)
		}
	}
	// Publication is deterministic: a second run prints the same digests.
	var again bytes.Buffer
	if err := run(&again); err != nil {
		t.Fatal(err)
	}
	if again.String() != got {
		t.Errorf("a second run printed something else:\n%s\nthen\n%s", got, again.String())
	}
}

// TestCopyableOutOfTheModule: the example imports no internal package, so
// it builds when copied into another module.
func TestCopyableOutOfTheModule(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "main.go", nil, parser.ImportsOnly)
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); strings.Contains("/"+p+"/", "/internal/") {
			t.Errorf("main.go imports %s, which a copy outside the module cannot", p)
		}
	}
}
