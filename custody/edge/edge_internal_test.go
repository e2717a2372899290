package edge

import (
	"net/http"
	"reflect"
	"testing"

	"github.com/checkfu/checkfu/egress"
)

func TestEdgeClientCacheIsBounded(t *testing.T) {
	d, err := egress.NewDialer(egress.DialerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	e := &Edge{dialer: d, clients: map[*egress.Rules]*egress.Client{}}
	for i := range maxEdgeClients + 10 {
		rules, err := egress.NewRules([]egress.Rule{{Host: "api.example.com", Port: uint16(1 + i), Methods: []string{"GET"}}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.client(rules); err != nil {
			t.Fatalf("client #%d: %v", i, err)
		}
		if n := len(e.clients); n > maxEdgeClients {
			t.Fatalf("after %d distinct Rules the Edge caches %d clients, want at most %d", i+1, n, maxEdgeClients)
		}
	}
}

// TestSetCredential: the credential replaces every value of its header
// under the canonical name, whatever case the edge was configured
// with, as http.Header.Set does; Accept-Encoding is identity alone; and
// appending to one of the two values leaves the other as it was.
func TestSetCredential(t *testing.T) {
	for _, header := range []string{"Authorization", "authorization", "X-Api-Key", "x-api-key"} {
		h := http.Header{"Authorization": {"from the caller"}, "X-Api-Key": {"from the caller"}, "Accept-Encoding": {"gzip"}}
		want := h.Clone()
		want.Set(header, "Bearer tok")
		want.Set("Accept-Encoding", "identity")
		setCredential(h, header, "Bearer tok")
		if !reflect.DeepEqual(h, want) {
			t.Fatalf("setCredential(%q) = %v, want %v", header, h, want)
		}
		h.Add("Accept-Encoding", "gzip")
		if got := h.Values(header); len(got) != 1 || got[0] != "Bearer tok" {
			t.Fatalf("an append to Accept-Encoding changed %s: %q", header, got)
		}
	}
}
