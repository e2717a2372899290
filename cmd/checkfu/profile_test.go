package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const cliImage = `"image": {"ref": "docker.io/library/golang:1.26", "digest": "sha256:1111111111111111111111111111111111111111111111111111111111111111"}, "resources": {"cpu_millis": 1000, "memory_mib": 512}`

func writeFile(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestProfilePublishDiffSelect(t *testing.T) {
	dir := t.TempDir()
	v1in := writeFile(t, dir, "v1.json", `{"name": "go-build", `+cliImage+`, "ecosystems": ["go"], "network_policy": {"type": "allowlist", "allowed_hosts": ["api.example.com"]}}`)
	v2in := writeFile(t, dir, "v2.json", `{"name": "go-build", `+cliImage+`, "ecosystems": ["go"], "network_policy": {"type": "allowlist", "allowed_hosts": ["api.example.com"], "allow_package_managers": true}}`)
	v1 := filepath.Join(dir, "v1.pub.json")
	v2 := filepath.Join(dir, "v2.pub.json")
	stdout, stderr, code := runCLI(t, "", "profile", "publish", "-in", v1in, "-out", v1)
	if code != exitOK || !strings.Contains(stdout, "host api.example.com:443 granted by allowed_hosts") || !strings.Contains(stdout, "network policy hash: sha256:") {
		t.Fatalf("publish v1: exit %d\n%s%s", code, stdout, stderr)
	}
	stdout, stderr, code = runCLI(t, "", "profile", "publish", "-in", v2in, "-prev", v1, "-out", v2)
	if code != exitOK || !strings.Contains(stdout, "version 2") || !strings.Contains(stdout, "host proxy.golang.org:443 granted by allow_package_managers (go) [relays to any origin]") ||
		!strings.Contains(stdout, "catalog version: 2026-11-30.1") || !strings.Contains(stderr, "warning: proxy.golang.org:443 relays to any origin") {
		t.Fatalf("publish v2: exit %d\n%s%s", code, stdout, stderr)
	}
	stdout, _, code = runCLI(t, "", "profile", "diff", v1, v2)
	if code != exitOK || !strings.Contains(stdout, "+ proxy.golang.org:443 (widened)") || !strings.Contains(stdout, "widens: yes") {
		t.Fatalf("diff: exit %d\n%s", code, stdout)
	}
	stdout, _, _ = runCLI(t, "", "profile", "diff", v2, v1)
	if !strings.Contains(stdout, "- sum.golang.org:443 (narrowed)") || !strings.Contains(stdout, "widens: no") {
		t.Fatalf("reverse diff:\n%s", stdout)
	}

	providers := writeFile(t, dir, "providers.json", `{"providers": [
		{"provider": "partner:vm", "provider_revision": "7", "egress_certification": "unsupported"},
		{"provider": "checkfu:docker-provider", "provider_revision": "3", "egress_certification": "advisory_filter", "enforcement": {"network_policy": "provider_attested"}}]}`)
	stdout, stderr, code = runCLI(t, "", "profile", "select", "-profile", v2, "-providers", providers, "-receipts", dir)
	if code != exitOK || !strings.Contains(stdout, "candidate partner:vm@7: grade unsupported: refused: egress_certification_unsatisfied") || !strings.Contains(stdout, "selected checkfu:docker-provider@3") {
		t.Fatalf("select: exit %d\n%s%s", code, stdout, stderr)
	}

	boundary := writeFile(t, dir, "b.json", `{"name": "strict", `+cliImage+`, "network_policy": {"type": "allowlist", "allowed_hosts": ["api.example.com"], "required_egress_certification": "security_boundary"}}`)
	bpub := filepath.Join(dir, "b.pub.json")
	if _, stderr, code := runCLI(t, "", "profile", "publish", "-in", boundary, "-out", bpub); code != exitOK {
		t.Fatalf("publish strict: %s", stderr)
	}
	stdout, stderr, code = runCLI(t, "", "profile", "select", "-profile", bpub, "-providers", providers)
	if code != exitFailed || !strings.Contains(stderr, "code: provider_unavailable") || !strings.Contains(stdout, "grade advisory_filter: refused: egress_certification_unsatisfied") {
		t.Fatalf("select strict: exit %d\n%s%s", code, stdout, stderr)
	}
}

func TestProfilePublishRefusals(t *testing.T) {
	dir := t.TempDir()
	for name, tt := range map[string]struct{ doc, code string }{
		"mcp alone":      {`{"name": "m", ` + cliImage + `, "network_policy": {"type": "allowlist", "allow_mcp_servers": true}}`, "allowlist_reaches_nothing"},
		"unknown member": {`{"name": "m", "extra": 1, ` + cliImage + `, "network_policy": {"type": "none"}}`, "profile_invalid"},
	} {
		in := writeFile(t, dir, strings.ReplaceAll(name, " ", "_")+".json", tt.doc)
		_, stderr, code := runCLI(t, "", "profile", "publish", "-in", in, "-out", filepath.Join(dir, "out.json"))
		if code != exitFailed || !strings.Contains(stderr, "code: "+tt.code) {
			t.Errorf("%s: exit %d, stderr %q", name, code, stderr)
		}
	}
	if _, _, code := runCLI(t, "", "profile", "publish"); code != exitUsage {
		t.Errorf("publish without flags: exit %d", code)
	}
}

func TestProfilePublishCatalog(t *testing.T) {
	dir := t.TempDir()
	in := writeFile(t, dir, "p.json", `{"name": "n", `+cliImage+`, "ecosystems": ["npm"], "network_policy": {"type": "allowlist", "allow_package_managers": true}}`)
	cat := writeFile(t, dir, "cat.json", `{"version": "2026-12-02.1", "hosts": [{"ecosystem": "npm", "host": "registry.yarnpkg.com", "port": 443, "purpose": "yarn registry mirror"}]}`)
	stdout, stderr, code := runCLI(t, "", "profile", "publish", "-in", in, "-catalog", cat, "-out", filepath.Join(dir, "out.json"))
	if code != exitOK || !strings.Contains(stdout, "host registry.yarnpkg.com:443 granted by allow_package_managers (npm)") || !strings.Contains(stdout, "catalog version: 2026-12-02.1") || strings.Contains(stdout, "registry.npmjs.org") {
		t.Fatalf("publish with a catalog: exit %d\n%s%s", code, stdout, stderr)
	}
	bad := writeFile(t, dir, "bad.json", `{"version": "2026-12-02.1", "hosts": [{"ecosystem": "maven", "host": "repo.example", "port": 443, "purpose": "x"}]}`)
	_, stderr, code = runCLI(t, "", "profile", "publish", "-in", in, "-catalog", bad, "-out", filepath.Join(dir, "out2.json"))
	if code != exitFailed || !strings.Contains(stderr, "code: catalog_invalid") {
		t.Errorf("bad catalog: exit %d, %s", code, stderr)
	}
}

// TestProfileReadChecksCatalog: a published version is re-derived
// against the catalog it names, so a version made with a custom catalog
// reads only when that catalog is supplied, and a stored version edited
// to add a host "granted" by the catalog is refused.
func TestProfileReadChecksCatalog(t *testing.T) {
	dir := t.TempDir()
	in := writeFile(t, dir, "p.json", `{"name": "n", `+cliImage+`, "ecosystems": ["npm"], "network_policy": {"type": "allowlist", "allow_package_managers": true}}`)
	cat := writeFile(t, dir, "cat.json", `{"version": "2026-12-02.1", "hosts": [{"ecosystem": "npm", "host": "registry.yarnpkg.com", "port": 443, "purpose": "yarn registry mirror"}]}`)
	out := filepath.Join(dir, "out.json")
	if _, stderr, code := runCLI(t, "", "profile", "publish", "-in", in, "-catalog", cat, "-out", out); code != exitOK {
		t.Fatalf("publish: exit %d, %s", code, stderr)
	}
	if _, stderr, code := runCLI(t, "", "profile", "diff", out, out); code != exitFailed || !strings.Contains(stderr, "code: published_invalid") {
		t.Errorf("diff without the catalog: exit %d, %s", code, stderr)
	}
	if stdout, stderr, code := runCLI(t, "", "profile", "diff", "-catalog", cat, out, out); code != exitOK || !strings.Contains(stdout, "widens: no") {
		t.Errorf("diff with the catalog: exit %d\n%s%s", code, stdout, stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	forged := strings.Replace(string(b), `"host":"registry.yarnpkg.com"`, `"host":"registry.yarnpkg.com.evil.example"`, 1)
	if forged == string(b) {
		t.Fatalf("fixture changed shape: %s", b)
	}
	fp := writeFile(t, dir, "forged.json", forged)
	if _, stderr, code := runCLI(t, "", "profile", "diff", "-catalog", cat, out, fp); code != exitFailed || !strings.Contains(stderr, "code: published_invalid") {
		t.Errorf("diff of a forged version: exit %d, %s", code, stderr)
	}
}
