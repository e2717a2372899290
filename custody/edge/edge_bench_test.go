package edge_test

import (
	"context"
	"crypto/sha256"
	"io"
	"net/http"
	"runtime/trace"
	"slices"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/custody/authz"
	"github.com/checkfu/checkfu/custody/edge"
	"github.com/checkfu/checkfu/custody/pipeline"
	"github.com/checkfu/checkfu/egress"
)

// BenchmarkEdge compares a read-only call through the call pipeline, on a
// channel opened once (assignment, schema validation, canonical arguments,
// rule decision, lease spend, sealed-record open, attach, echo scan,
// events) with the bare egress client making the same request
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
	b.Run("Channel.Call", func(b *testing.B) {
		ch, _ := benchChannel(b, rig, inv)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := ch.Call(context.Background(), inv.Call.Capability, inv.Call.Arguments); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Channel.Plan", func(b *testing.B) {
		ch, _ := benchChannel(b, rig, inv)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := ch.Plan(inv.Call.Capability, inv.Call.Arguments); err != nil {
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

// BenchmarkEdgeRatio measures an allowed call through the call pipeline
// against the bare egress client for a 1 KiB answer, in alternating rounds
// of the same run so that load changes on a shared machine hit both alike,
// and reports the throughput ratio (bare ns per call / pipeline ns per
// call) as "ratio". The pipeline is built and its channel opened once, as
// a session does; every call then runs the whole order of checks (channel,
// assignment, registration, arguments, rules, approval, lease) and the
// edge (sealed-record open, attach, echo scan, evidence).
func BenchmarkEdgeRatio(b *testing.B) {
	rig := newEdgeRig(b)
	rig.listBody = edge.BenchPage
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
		if len(body) != len(edge.BenchPage) {
			b.Fatalf("bare client read %d bytes", len(body))
		}
	}
	ch, events := benchChannel(b, rig, inv)
	call := func() {
		resp, err := ch.Call(context.Background(), inv.Call.Capability, inv.Call.Arguments)
		if err != nil {
			b.Fatal(err)
		}
		if len(resp.Body) != len(edge.BenchPage) {
			b.Fatalf("pipeline call read %d bytes", len(resp.Body))
		}
	}
	plan := func() {
		if _, err := ch.Plan(inv.Call.Capability, inv.Call.Arguments); err != nil {
			b.Fatal(err)
		}
	}
	bare()
	call()
	// Alternating rounds; the ratio reported is the median of the rounds'
	// ratios of wall time, and "cpu-ratio" is the same over the process's
	// CPU time (client and loopback server alike, which both sides share),
	// which the other processes of a shared machine disturb less.
	// "checks-ratio" isolates the pipeline's order of checks (steps 1 to
	// 5, its dry run Plan) from the edge's custody work: bare / (bare +
	// Plan), per round.
	const rounds = 21
	per := max(b.N/rounds, 1)
	var wall, cpu, checks []float64
	var bareT, pipeT, planT time.Duration
	b.ResetTimer()
	for range rounds {
		c0, t0 := cpuTime(), time.Now()
		for range per {
			bare()
		}
		c1, t1 := cpuTime(), time.Now()
		for range per {
			call()
		}
		c2, t2 := cpuTime(), time.Now()
		for range per {
			plan()
		}
		t3 := time.Now()
		bareT += t1.Sub(t0)
		pipeT += t2.Sub(t1)
		planT += t3.Sub(t2)
		wall = append(wall, float64(t1.Sub(t0))/float64(t2.Sub(t1)))
		cpu = append(cpu, float64(c1-c0)/float64(c2-c1))
		checks = append(checks, float64(t1.Sub(t0))/float64(t1.Sub(t0)+t3.Sub(t2)))
	}
	slices.Sort(wall)
	slices.Sort(cpu)
	slices.Sort(checks)
	if n := events.n.Load(); n < int64(2*(rounds*per+1)) {
		b.Fatalf("%d events for %d calls; each records its decision and its edge call", n, rounds*per+1)
	}
	calls := float64(rounds * per)
	b.ReportMetric(float64(bareT.Nanoseconds())/calls, "bare-ns/call")
	b.ReportMetric(float64(pipeT.Nanoseconds())/calls, "pipeline-ns/call")
	b.ReportMetric(float64(planT.Nanoseconds())/calls, "plan-ns/call")
	b.ReportMetric(wall[rounds/2], "ratio")
	b.ReportMetric(cpu[rounds/2], "cpu-ratio")
	b.ReportMetric(checks[rounds/2], "checks-ratio")
}

// BenchmarkEdgeRegions runs the calls of BenchmarkEdgeRatio inside
// runtime/trace regions, for `go test -trace` and `go tool trace` (User-defined
// regions): where each call's wall time goes (running, waiting for the
// answer, the body's hand-over, waiting to be scheduled, GC). Its rounds
// are the bare call ("bare"), the pipeline's call ("pipeline"), and the
// bare call again right after burnBytes of SHA-256 outside its region
// ("bare-after-cpu"), which shows what CPU work just before an exchange
// does to the exchange's own wall time. Its ns/op is no figure: read the trace.
func BenchmarkEdgeRegions(b *testing.B) {
	rig := newEdgeRig(b)
	rig.listBody = edge.BenchPage
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
	ctx := context.Background()
	bare := func() {
		req, _ := http.NewRequestWithContext(ctx, "GET", rig.base+"/v1/repos/acme/app/issues?state=open", nil)
		resp, err := client.Do(req, func(h http.Header) error { h.Set("Authorization", "Bearer "+edgeCanary); return nil })
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body) //nolint:errcheck // the length is what BenchmarkEdgeRatio checks
		resp.Body.Close()
	}
	ch, _ := benchChannel(b, rig, inv)
	call := func() {
		if _, err := ch.Call(ctx, inv.Call.Capability, inv.Call.Arguments); err != nil {
			b.Fatal(err)
		}
	}
	// burnBytes of SHA-256 take about 30 µs on the machine of
	// docs/benchmarks/custody-edge.md, what the pipeline adds in CPU.
	const burnBytes = 48 << 10
	burn := make([]byte, burnBytes)
	var sum [sha256.Size]byte
	bare()
	call()
	const rounds = 10
	per := max(b.N/(2*rounds), 1)
	b.ResetTimer()
	for range rounds {
		for range per {
			trace.WithRegion(ctx, "bare", bare)
		}
		for range per {
			trace.WithRegion(ctx, "pipeline", call)
		}
		for range per {
			sum = sha256.Sum256(burn)
			trace.WithRegion(ctx, "bare-after-cpu", bare)
		}
	}
	b.StopTimer()
	if sum == ([sha256.Size]byte{}) {
		b.Fatal("no CPU burnt")
	}
}

// benchChannel opens one channel of a call pipeline over a fresh Edge of
// rig, for inv, as a session does before its calls. The pipeline and the
// edge record into a sink that counts and keeps nothing: the figures
// measure building and handing over each event, not a test sink's slice
// growing over thousands of calls.
func benchChannel(b *testing.B, rig *edgeRig, inv invocation) (*pipeline.Channel, *countEvidence) {
	b.Helper()
	events := &countEvidence{}
	e, err := edge.NewEdge(edge.EdgeConfig{
		Leases: rig.leases, Custodian: rig.custodian, Evidence: events, Label: checkfu.LabelMock, Now: rig.clock.Now,
		Dialer: rig.dialer, RootCAs: rig.roots,
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(e.CloseIdleConnections)
	via := rig.via(e)
	via.evidence = events
	ch, err := via.open(context.Background(), inv)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(ch.Close)
	return ch, events
}

// countEvidence is an authz.EvidenceSink that counts the events it is
// given and keeps none.
type countEvidence struct{ n atomic.Int64 }

func (c *countEvidence) Record(ctx context.Context, _ authz.Evidence) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.n.Add(1)
	return nil
}

// cpuTime returns the CPU time this process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
