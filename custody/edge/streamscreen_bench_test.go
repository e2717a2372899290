package edge

import (
	"fmt"
	"strings"
	"testing"
)

// BenchmarkStreamScreen screens the model route's long-stream batches
// (64 KiB of Anthropic text deltas, as gateway/door's long stream sends)
// with the batch's own echo check alone (batch) and with the stream
// screen (stream: the seam and the text channels too, and what to hold
// back).
func BenchmarkStreamScreen(b *testing.B) {
	const ev = "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"more text from the scripted model, one delta of a long stream\"}}\n\n"
	tok := []byte("sk-ant-MODELCANARY-0123456789abcdefXYZ")
	for _, size := range []int{16 << 10, 64 << 10} {
		batch := []byte(strings.Repeat(ev, size/len(ev)))
		b.Run(fmt.Sprintf("%dKiB", size>>10), func(b *testing.B) { benchmarkStreamScreen(b, tok, batch) })
	}
}

func benchmarkStreamScreen(b *testing.B, tok, batch []byte) {
	b.Run("batch", func(b *testing.B) {
		s, done := screenOf(tok)
		defer done()
		b.SetBytes(int64(len(batch)))
		for b.Loop() {
			if echoIn(batch, s.forms) {
				b.Fatal("found")
			}
		}
	})
	b.Run("stream", func(b *testing.B) {
		s, done := screenOf(tok)
		defer done()
		b.SetBytes(int64(len(batch)))
		for b.Loop() {
			if s.screen(batch) {
				b.Fatal("found")
			}
			if s.hold() != 0 {
				b.Fatal("held")
			}
		}
	})
}
