package edge

import (
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
