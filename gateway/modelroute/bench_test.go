package modelroute_test

import (
	"io"
	"strings"
	"testing"

	"github.com/checkfu/checkfu/gateway/modelroute"
)

// BenchmarkRelay: the relay's own work on a long Anthropic stream (a
// usage-bearing start, 100 000 text deltas, a usage-bearing end), from
// memory to io.Discard with no screen: the framing of events, the usage
// read and the batches, apart from any socket.
func BenchmarkRelay(b *testing.B) {
	const delta = "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"more text from the scripted model, one delta of a long stream\"}}\n\n"
	stream := "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"usage\":{\"input_tokens\":100,\"output_tokens\":1}}}\n\n" +
		strings.Repeat(delta, 100_000) +
		"event: message_delta\ndata: {\"type\":\"message_delta\",\"usage\":{\"output_tokens\":10}}\n\n"
	src := strings.NewReader(stream)
	b.SetBytes(int64(len(stream)))
	for b.Loop() {
		src.Reset(stream)
		u, err := modelroute.Relay(io.Discard, nil, &chunks{src}, modelroute.AnthropicMessages, nil)
		if err != nil || u != (modelroute.Usage{InputTokens: 100, OutputTokens: 10, Final: true}) {
			b.Fatal(u, err)
		}
	}
}

// chunks reads at most 16 KiB at a time, as a TLS record arrives.
type chunks struct{ r io.Reader }

func (c *chunks) Read(p []byte) (int, error) {
	if len(p) > 16<<10 {
		p = p[:16<<10]
	}
	return c.r.Read(p)
}
