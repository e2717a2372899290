package edge_test

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/checkfu/checkfu/custody/authz"
	"github.com/checkfu/checkfu/egress"
)

// BenchmarkEdge compares a full read-only Edge.Call (schema validation,
// canonical arguments, rule decision, lease spend, sealed-record open,
// attach, echo scan) with the bare egress client making the same request
// to the same loopback TLS upstream with a constant Authorization header,
// in the same run.
func BenchmarkEdge(b *testing.B) {
	rig := newEdgeRig(b)
	lease, err := rig.leases.Issue(authz.LeaseRequest{Provider: govProvider, Capabilities: []string{"issues.list"}, Scope: govScope, Budget: 1 << 40, TTL: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	inv := rig.list()
	inv.Lease = lease.ID

	b.Run("baseline=egress.Client.Do", func(b *testing.B) {
		client, err := egress.NewClient(egress.ClientConfig{Rules: rig.conn.Rules, Dialer: rig.dialer, RootCAs: rig.roots})
		if err != nil {
			b.Fatal(err)
		}
		defer client.CloseIdleConnections()
		b.ReportAllocs()
		for b.Loop() {
			req, _ := http.NewRequestWithContext(context.Background(), "GET", rig.base+"/v1/repos/acme/app/issues?state=open", nil)
			resp, err := client.Do(req, func(h http.Header) error { h.Set("Authorization", "Bearer "+edgeCanary); return nil })
			if err != nil {
				b.Fatal(err)
			}
			io.ReadAll(resp.Body)
			resp.Body.Close()
		}
	})
	b.Run("Edge.Call", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := rig.edge.Call(context.Background(), inv); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Registry.Resolve", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := rig.registry.Resolve(inv.Call, govCred); err != nil {
				b.Fatal(err)
			}
		}
	})
}
