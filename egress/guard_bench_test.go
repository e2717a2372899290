package egress_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/checkfu/checkfu/egress"
)

// BenchmarkGuardForward measures one absolute-form request through the
// guard to a loopback upstream, with keep-alive on both hops. The
// side-by-side figures against direct requests and smokescreen come from
// bench/guard/run.sh.
func BenchmarkGuardForward(b *testing.B) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok\n") }))
	defer up.Close()
	cp, _ := egress.UnrestrictedNetwork().Compile(nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	g, err := egress.NewGuard(egress.GuardConfig{Policy: cp, Listener: ln, TreatAsPublicForTesting: loopback1, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	go g.Serve()
	defer g.Shutdown(context.Background())
	tr := &http.Transport{Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: ln.Addr().String()}), MaxIdleConnsPerHost: 64}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr}
	target := up.URL + "/"
	b.ReportAllocs()
	b.SetParallelism(8)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			resp, err := c.Get(target)
			if err != nil {
				b.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				b.Fatalf("status %d", resp.StatusCode)
			}
		}
	})
}
