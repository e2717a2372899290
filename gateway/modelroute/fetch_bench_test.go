package modelroute_test

import (
	"strings"
	"testing"

	"github.com/checkfu/checkfu/gateway/modelroute"
)

// BenchmarkParseRequestWalk: ParseRequest on a 256 KiB Messages body
// three ways: with no "url" at all (the baseline); with "url" as a tool
// schema's member name, as Claude Code's WebFetch tool has (the
// pre-check skips the walk); and with a \u0072 escape in its text, which
// the pre-check cannot rule out, so the whole body is decoded and
// walked for a URL source: the walk's cost is that case against the
// baseline.
func BenchmarkParseRequestWalk(b *testing.B) {
	turn := `{"role":"user","content":[{"type":"text","text":"` + strings.Repeat("some words of a long conversation ", 30) + `"}]},`
	for _, c := range []struct{ name, tool, text string }{
		{"baseline", `{"name":"Read","input_schema":{"type":"object","properties":{"path":{"type":"string"}}}}`, "hi"},
		{"url_member", `{"name":"WebFetch","input_schema":{"type":"object","properties":{"url":{"type":"string"}}}}`, "hi"},
		{"walked", `{"name":"Read","input_schema":{"type":"object","properties":{"path":{"type":"string"}}}}`, `\u0072`},
	} {
		body := []byte(`{"model":"m","max_tokens":8,"tools":[` + c.tool + `],"messages":[` + strings.Repeat(turn, 256<<10/len(turn)) + `{"role":"user","content":"` + c.text + `"}]}`)
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if _, err := modelroute.ParseRequest(modelroute.AnthropicMessages, "POST", "/v1/messages", "", body); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
