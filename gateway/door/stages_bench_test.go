package door_test

import (
	"context"
	"net/http"
	"runtime/pprof"
	"testing"

	"github.com/checkfu/checkfu/gateway/broker"
	"github.com/checkfu/checkfu/gateway/internal/rigtest"
	"github.com/checkfu/checkfu/gateway/modelroute"
)

// staged runs f with the profiler label stage=name: every goroutine f
// starts (a server's, and each one that server starts in turn) carries
// it, so a CPU profile splits by stage (go tool pprof -tags).
func staged(name string, f func()) {
	pprof.Do(context.Background(), pprof.Labels("stage", name), func(context.Context) { f() })
}

// BenchmarkModelRouteLongStreamStages is BenchmarkModelRouteLongStream's
// three arms, the same streams, with every goroutine labelled by the
// stage it serves: "client" (the agent reading the stream), "door" (the
// door's byte relay), "plane" (the broker, pipeline, edge and Relay, or
// in the hops arm the plain relay in its place) and "server" (the
// scripted model server). It is for a CPU profile, the CPU each stage
// spends per byte:
//
//	go test -run '^$' -bench 'BenchmarkModelRouteLongStreamStages/route' -benchtime 40x -cpuprofile route.prof ./gateway/door/
//	go tool pprof -tags route.prof
//
// What no label covers is the runtime's own (the garbage collector's
// background work).
func BenchmarkModelRouteLongStreamStages(b *testing.B) {
	var r *rigtest.Rig
	staged("server", func() { r = rigtest.NewModelBudget(b, modelroute.Budget{Requests: 1 << 40, Tokens: 1 << 60}) })
	r.Grant(rigtest.ModelCapability)
	br, err := broker.New(r.Channel(rigtest.Member()))
	if err != nil {
		b.Fatal(err)
	}
	var sock, routeURL string
	staged("plane", func() { sock = rigtest.ServeBroker(b, br) })
	staged("door", func() { routeURL = "http://" + rigtest.ServeModelRelay(b, sock) })
	r.Model.SetDeltas(100_000)
	b.Run("direct", func(b *testing.B) {
		staged("client", func() {
			for b.Loop() {
				readStream(b, r.Model.DirectClient, r.Model.Direct)
			}
		})
	})
	b.Run("hops", func(b *testing.B) {
		var hopsSock, hopsURL string
		staged("plane", func() { hopsSock = hopsPlane(b, r.Model.Direct, r.Model.DirectClient) })
		staged("door", func() { hopsURL = "http://" + rigtest.ServeModelRelay(b, hopsSock) })
		staged("client", func() {
			c := &http.Client{}
			for b.Loop() {
				readStream(b, c, hopsURL)
			}
		})
	})
	b.Run("route", func(b *testing.B) {
		staged("client", func() {
			c := &http.Client{}
			for b.Loop() {
				readStream(b, c, routeURL)
			}
		})
	})
}
