package wire

import (
	"testing"

	"pgregory.net/rapid"
)

func genBytes(t *rapid.T, label string, max int) []byte {
	n := rapid.IntRange(0, max).Draw(t, label+"Len")
	b := make([]byte, n)
	seed := rapid.Uint32().Draw(t, label+"Seed")
	for i := range b {
		seed = seed*1664525 + 1013904223
		b[i] = byte(seed >> 24)
	}
	return b
}

// TestPropertyWire drives the pure provider and Runner through random
// schedules of chunking, drops, reconnects, lazy replays, lost and stale
// grants, blocked stdin, detach eviction and hostile overruns. Every run
// must end (no deadlock) with stdout delivered exactly once and in order
// (or the process terminated with output_truncated), stdin applied
// exactly once, and never more outstanding than granted.
func TestPropertyWire(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		cfg := providerConfig{
			outputWindow: rapid.IntRange(64, 8192).Draw(t, "window"),
			inputCredit:  rapid.IntRange(16, 8192).Draw(t, "credit"),
			stderrCap:    rapid.IntRange(0, 512).Draw(t, "stderrCap"),
			lazyReplay:   rapid.Bool().Draw(t, "lazy"),
		}
		s := newSim(t, cfg, genBytes(t, "out", 40000), genBytes(t, "err", 2000), genBytes(t, "in", 40000), rapid.Bool().Draw(t, "hostile"))
		s.connect()
		steps := rapid.IntRange(0, 300).Draw(t, "steps")
		for range steps {
			s.step(t)
		}
		s.drain()
		s.verify()
	})
}
