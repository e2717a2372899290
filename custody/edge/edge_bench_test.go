package edge_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
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

// issuesPage is a 1 KiB answer shaped like a real provider's: a JSON list
// of issues with URLs, and issue bodies with "\r\n" and "\"" escapes, so
// that the echo check's JSON view, line-break view and repeated views all
// run, as they do on real traffic.
var issuesPage = func() []byte {
	var b strings.Builder
	b.WriteString("[")
	for i := 0; b.Len() < 1024-160; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"id":%d,"url":"https://api.example.com/repos/acme/app/issues/%d","title":"Crash on start %d","state":"open","body":"Steps:\r\n1. run \"app\"\r\n2. see the crash"}`, 1000+i, i, i)
	}
	b.WriteString("]")
	for b.Len() < 1024 {
		b.WriteString(" ")
	}
	return []byte(b.String())
}()

// BenchmarkEdgeRatio measures Edge.Call against the bare egress client
// for a 1 KiB answer, in alternating rounds of the same run so that load
// changes on a shared machine hit both alike, and reports the throughput
// ratio (bare ns per call / Edge.Call ns per call) as "ratio".
func BenchmarkEdgeRatio(b *testing.B) {
	rig := newEdgeRig(b)
	rig.listBody = issuesPage
	lease, err := rig.leases.Issue(authz.LeaseRequest{Provider: govProvider, Capabilities: []string{"issues.list"}, Scope: govScope, Budget: 1 << 40, TTL: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	inv := rig.list()
	inv.Lease = lease.ID
	client, err := egress.NewClient(egress.ClientConfig{Rules: rig.conn.Rules, Dialer: rig.dialer, RootCAs: rig.roots})
	if err != nil {
		b.Fatal(err)
	}
	defer client.CloseIdleConnections()
	bare := func() {
		req, _ := http.NewRequestWithContext(context.Background(), "GET", rig.base+"/v1/repos/acme/app/issues?state=open", nil)
		resp, err := client.Do(req, func(h http.Header) error { h.Set("Authorization", "Bearer "+edgeCanary); return nil })
		if err != nil {
			b.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if len(body) != len(issuesPage) {
			b.Fatalf("bare client read %d bytes", len(body))
		}
	}
	call := func() {
		resp, err := rig.edge.Call(context.Background(), inv)
		if err != nil {
			b.Fatal(err)
		}
		if len(resp.Body) != len(issuesPage) {
			b.Fatalf("Edge.Call read %d bytes", len(resp.Body))
		}
	}
	bare()
	call()
	const rounds = 10
	var bareT, edgeT time.Duration
	per := max(b.N/rounds, 1)
	b.ResetTimer()
	for range rounds {
		t0 := time.Now()
		for range per {
			bare()
		}
		t1 := time.Now()
		for range per {
			call()
		}
		bareT += t1.Sub(t0)
		edgeT += time.Since(t1)
	}
	b.ReportMetric(float64(bareT.Nanoseconds())/float64(rounds*per), "bare-ns/call")
	b.ReportMetric(float64(edgeT.Nanoseconds())/float64(rounds*per), "edge-ns/call")
	b.ReportMetric(float64(bareT)/float64(edgeT), "ratio")
}
