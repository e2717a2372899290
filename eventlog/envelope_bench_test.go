package eventlog

import (
	"testing"
	"time"
)

// BenchmarkDecodeEnvelope measures the per-record cost of reading: strict
// decode plus the chain hash.
func BenchmarkDecodeEnvelope(b *testing.B) {
	env := envelope{session: "sess-01", seq: 42, event: Event{
		Kind: KindToolCall, Time: time.Unix(1, 2).UTC(), Actor: "agent:1", RequestID: "req-1", RunID: "run-1",
		Tool: ToolDescriptor{"github.create_issue", "7"}, Result: "ok", Release: "checkfu@dev",
	}, mode: ContentSealed}
	enc := env.encode()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := decodeEnvelope(enc); err != nil {
			b.Fatal(err)
		}
		chainHash(enc)
	}
}
