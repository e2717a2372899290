package wire

import (
	"bytes"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/checkfu/checkfu/internal/cutproxy"
)

// TestRandomCutsTransport runs the real transport (goroutines, sockets,
// a real process) through randomized schedules: random stdin sizes,
// windows and credits, lazy or exact replay, and connection cuts armed
// at random points from both directions while data flows. Every run must
// end with cat's stdout equal to its stdin (exactly once, in order, both
// ways) and status 0. The schedules are seeded; where a cut lands still
// depends on timing, so every run explores slightly different ones.
func TestRandomCutsTransport(t *testing.T) {
	for seed := uint64(1); seed <= 12; seed++ {
		rng := rand.New(rand.NewPCG(seed, 99))
		input := make([]byte, rng.IntN(600<<10))
		for i := range input {
			input[i] = byte(rng.Uint32())
		}
		srv := &Server{
			Command:      command("cat"),
			OutputWindow: MinWindow + rng.IntN(128<<10),
			InputCredit:  MinWindow + rng.IntN(128<<10),
			lazyReplay:   rng.IntN(2) == 0,
		}
		addr := startServer(t, srv)
		proxy, err := cutproxy.New(addr)
		if err != nil {
			t.Fatal(err)
		}
		in := &randomCutter{r: bytes.NewReader(input), proxy: proxy, rng: rand.New(rand.NewPCG(seed, 1))}
		out := &randomCutWriter{proxy: proxy, rng: rand.New(rand.NewPCG(seed, 2))}
		r := &Runner{Keys: runnerKeys, Dial: dialer(proxy.Addr()), Stdin: in, Stdout: out}
		status, err := r.Run(testCtx(t))
		proxy.Close()
		srv.Close()
		if err != nil || status != 0 {
			t.Fatalf("seed %d: Run() = %d, %v", seed, status, err)
		}
		if !bytes.Equal(out.buf.Bytes(), input) {
			t.Fatalf("seed %d: cat returned %d bytes, sent %d (window %d, credit %d, lazy %v, cuts %d)",
				seed, out.buf.Len(), len(input), srv.OutputWindow, srv.InputCredit, srv.lazyReplay, proxy.Cuts())
		}
		t.Logf("seed %d: %d bytes, %d cuts", seed, len(input), proxy.Cuts())
	}
}

// randomCutter is a stdin that arms a cut after a random number of
// forwarded bytes, now and then, as it is read.
type randomCutter struct {
	r     io.Reader
	proxy *cutproxy.Proxy
	rng   *rand.Rand
}

func (c *randomCutter) Read(p []byte) (int, error) {
	if c.rng.IntN(8) == 0 {
		c.proxy.CutAfter(1 + c.rng.Int64N(64<<10))
	}
	return c.r.Read(p[:min(len(p), 1+c.rng.IntN(32<<10))])
}

// randomCutWriter collects stdout and arms cuts at random points.
type randomCutWriter struct {
	buf   bytes.Buffer
	proxy *cutproxy.Proxy
	rng   *rand.Rand
}

func (c *randomCutWriter) Write(p []byte) (int, error) {
	if c.rng.IntN(8) == 0 {
		c.proxy.CutAfter(1 + c.rng.Int64N(64<<10))
	}
	return c.buf.Write(p)
}
