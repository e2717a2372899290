package main

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"testing"
)

// guardRefusalLog runs the guard with -log-format format, sends it one
// request for a host the policy does not allow, stops it and returns
// its stderr.
func guardRefusalLog(t *testing.T, format string) string {
	t.Helper()
	policy := writePolicy(t, `{"type":"allowlist","allowed_hosts":["api.example.test:443"]}`)
	g := startGuardCommand(t, "-policy", policy, "-log-format", format)
	addr := g.addr
	tr := &http.Transport{Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: addr}), DisableKeepAlives: true}
	resp, err := (&http.Client{Transport: tr}).Get("http://other.example.test/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	g.cmd.Process.Signal(syscall.SIGTERM)
	g.cmd.Wait()
	return g.stderr.String()
}

// TestGuardLogFormats: the text log names a refused target once quoted
// at most, never `target="\"host\""`; -log-format json writes one JSON
// object per line with the same attributes; another format is a usage
// error.
func TestGuardLogFormats(t *testing.T) {
	text := guardRefusalLog(t, "text")
	if !strings.Contains(text, "target=other.example.test ") || strings.Contains(text, `\"`) {
		t.Errorf("text log:\n%s\nwant target=other.example.test, quoted once at most", text)
	}
	found := false
	for _, line := range strings.Split(strings.TrimSpace(guardRefusalLog(t, "json")), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("json log line %q: %v", line, err)
		}
		if rec["msg"] == "egress guard: refused" {
			found = rec["target"] == "other.example.test" && rec["code"] == "host_not_allowed"
		}
	}
	if !found {
		t.Error("the json log has no refusal of other.example.test with code host_not_allowed")
	}
	if _, stderr, code := runCLI(t, "", "guard", "-listen", "127.0.0.1:0", "-policy", "x", "-log-format", "xml"); code != exitUsage {
		t.Errorf("-log-format xml: exit %d, want %d (stderr %q)", code, exitUsage, stderr)
	}
}
