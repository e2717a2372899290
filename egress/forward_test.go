package egress_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestGuardForwarding covers the forwarder's HTTP/1.1 details: bodies,
// methods, streamed responses, HEAD, hop-by-hop headers in both
// directions, and a pooled connection the destination closed meanwhile.
func TestGuardForwarding(t *testing.T) {
	rig := newGuardRig(t, allowBoth)
	tr := &http.Transport{Proxy: http.ProxyURL(rig.proxyURL)}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr}
	base := "http://legit.example.test:" + rig.upPort

	do := func(method, path, body string, hdr ...string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		if body == "" {
			req.Body = nil
		}
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatalf("%s %s: reading body: %v", method, path, err)
		}
		return resp, string(b)
	}

	_, got := do("POST", "/echo?q=1%202", "hello body", "Connection", "X-Hop", "X-Hop", "secret-hop", "User-Agent", "")
	if want := `POST /echo?q=1%202 ua="" hop="" body=hello body`; got != want {
		t.Errorf("POST echo = %q, want %q", got, want)
	}
	_, got = do("PUT", "/echo", "", "User-Agent", "workload/1")
	if want := `PUT /echo ua="workload/1" hop="" body=`; got != want {
		t.Errorf("PUT echo = %q, want %q", got, want)
	}
	resp, got := do("GET", "/stream", "")
	if got != "part0;part1;part2;" || resp.Header.Get("X-Upstream-Hop") != "" {
		t.Errorf("stream = %q, X-Upstream-Hop %q", got, resp.Header.Get("X-Upstream-Hop"))
	}
	resp, got = do("HEAD", "/", "")
	if resp.StatusCode != 200 || got != "" {
		t.Errorf("HEAD = %d %q", resp.StatusCode, got)
	}

	// The destination drops its idle connections: the guard's pooled one
	// is dead, and the next request must still succeed.
	rig.upstream.CloseClientConnections()
	if _, got := do("GET", "/echo", ""); !strings.HasPrefix(got, "GET /echo") {
		t.Errorf("after the upstream closed idle connections: %q", got)
	}
}
