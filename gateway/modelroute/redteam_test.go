package modelroute_test

import (
	"bytes"
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/checkfu/checkfu/gateway/modelroute"
)

// TestUsageNeverWraps (red team): usage fields a provider reports huge
// or negative cannot wrap the token count negative, which would make the
// budget unlimited: a sum past the int64 range stays at its largest
// value, a negative count counts as zero.
func TestUsageNeverWraps(t *testing.T) {
	stream := "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":9223372036854775807,\"cache_read_input_tokens\":1,\"output_tokens\":-7}}}\n\n"
	u, err := modelroute.Relay(&bytes.Buffer{}, nil, strings.NewReader(stream), modelroute.AnthropicMessages, nil)
	if err != nil || u.InputTokens != math.MaxInt64 || u.OutputTokens != 0 {
		t.Fatalf("usage %+v, %v: want input at MaxInt64 and output 0", u, err)
	}
	cancel := "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":100,\"cache_read_input_tokens\":-1000,\"output_tokens\":1}}}\n\n"
	if u, err := modelroute.Relay(&bytes.Buffer{}, nil, strings.NewReader(cancel), modelroute.AnthropicMessages, nil); err != nil || u.InputTokens != 100 {
		t.Fatalf("usage %+v, %v: a negative cache count cancelled the input, want 100", u, err)
	}
	m := modelroute.NewMeter(modelroute.Budget{Requests: 10, Tokens: 1000})
	_ = reserve(m)
	m.Settle(modelroute.Request{}, 0, 0, modelroute.Usage{InputTokens: 500})
	m.Settle(modelroute.Request{}, 0, 0, modelroute.Usage{InputTokens: -400, OutputTokens: -1})
	if got := m.Used().Tokens; got != 500 {
		t.Fatalf("tokens used %d after a negative report, want 500", got)
	}
	m.Settle(modelroute.Request{}, 0, 0, modelroute.Usage{InputTokens: math.MaxInt64, OutputTokens: math.MaxInt64})
	if got := m.Used().Tokens; got != math.MaxInt64 {
		t.Fatalf("tokens used %d, want MaxInt64", got)
	}
	if err := reserve(m); !errors.Is(err, modelroute.CodeModelBudgetExhausted) {
		t.Fatalf("a wrapped budget allowed a request: %v", err)
	}
}

// TestMeterSettle: a 2xx answer that ended without its final usage is
// charged at least the request's output cap, or the rest of the budget
// when it named none; an error answer, and one with its final usage, are
// charged what they reported.
func TestMeterSettle(t *testing.T) {
	for _, tc := range []struct {
		name      string
		status    int
		maxOutput int64
		u         modelroute.Usage
		want      modelroute.Usage
		used      int64
	}{
		{"final", 200, 4096, modelroute.Usage{InputTokens: 100, OutputTokens: 10, Final: true}, modelroute.Usage{InputTokens: 100, OutputTokens: 10, Final: true}, 110},
		{"cut, with a cap", 200, 4096, modelroute.Usage{InputTokens: 100, OutputTokens: 1}, modelroute.Usage{InputTokens: 100, OutputTokens: 4096}, 4196},
		{"cut past its cap", 200, 5, modelroute.Usage{InputTokens: 100, OutputTokens: 9}, modelroute.Usage{InputTokens: 100, OutputTokens: 9}, 109},
		{"cut before its input was reported", 200, 5, modelroute.Usage{}, modelroute.Usage{InputTokens: 40, OutputTokens: 5}, 45},
		{"no usage, no cap", 200, 0, modelroute.Usage{}, modelroute.Usage{InputTokens: 40, OutputTokens: 9960}, 10000},
		{"input only, no cap", 200, 0, modelroute.Usage{InputTokens: 300}, modelroute.Usage{InputTokens: 300, OutputTokens: 9700}, 10000},
		{"an error answer", 429, 4096, modelroute.Usage{}, modelroute.Usage{}, 0},
		{"no answer", 0, 4096, modelroute.Usage{}, modelroute.Usage{}, 0},
	} {
		m := modelroute.NewMeter(modelroute.Budget{Requests: 10, Tokens: 10000})
		_ = reserve(m)
		got := m.Settle(modelroute.Request{MaxOutput: tc.maxOutput, Bytes: 40}, 0, tc.status, tc.u)
		if got != tc.want || m.Used().Tokens != tc.used {
			t.Errorf("%s: charged %+v, used %d; want %+v, %d", tc.name, got, m.Used().Tokens, tc.want, tc.used)
		}
	}
}

// TestParseRequestMaxOutput: each dialect's own output cap is read; a
// cap of another dialect, or one that is not positive, is none; a cap
// that is not an integer is refused.
func TestParseRequestMaxOutput(t *testing.T) {
	for _, tc := range []struct {
		d    modelroute.Dialect
		body string
		want int64
	}{
		{modelroute.AnthropicMessages, `{"model":"m","max_tokens":4096}`, 4096},
		{modelroute.AnthropicMessages, `{"model":"m","max_output_tokens":4096}`, 0},
		{modelroute.AnthropicMessages, `{"model":"m","max_tokens":-1}`, 0},
		{modelroute.OpenAIResponses, `{"model":"m","max_output_tokens":77}`, 77},
		{modelroute.OpenAIResponses, `{"model":"m","max_tokens":77}`, 0},
		{modelroute.OpenAIChat, `{"model":"m","max_tokens":5,"max_completion_tokens":9}`, 9},
		{modelroute.OpenAIChat, `{"model":"m","max_tokens":5}`, 5},
		{modelroute.OpenAIChat, `{"model":"m","max_tokens":50,"max_completion_tokens":9}`, 50},
	} {
		r, err := modelroute.ParseRequest(tc.d, "POST", tc.d.Path(), "", []byte(tc.body))
		if err != nil || r.MaxOutput != tc.want {
			t.Errorf("%s %s: %+v, %v; want MaxOutput %d", tc.d, tc.body, r, err, tc.want)
		}
	}
	for _, body := range []string{`{"model":"m","max_tokens":1.5}`, `{"model":"m","max_tokens":"9"}`, `{"model":"m","MAX_TOKENS":9}`} {
		if _, err := modelroute.ParseRequest(modelroute.AnthropicMessages, "POST", "/v1/messages", "", []byte(body)); !errors.Is(err, modelroute.CodeModelRequestInvalid) {
			t.Errorf("%s: %v, want model_request_invalid", body, err)
		}
	}
}

// TestUsageFinal: only the provider's final report makes usage final:
// Anthropic's message_start alone does not; a Chat stream without usage
// does not.
func TestUsageFinal(t *testing.T) {
	for _, tc := range []struct {
		d      modelroute.Dialect
		stream string
		final  bool
	}{
		{modelroute.AnthropicMessages, streams[modelroute.AnthropicMessages], true},
		{modelroute.AnthropicMessages, strings.SplitAfter(streams[modelroute.AnthropicMessages], "\n\n")[0], false},
		{modelroute.OpenAIResponses, streams[modelroute.OpenAIResponses], true},
		{modelroute.OpenAIResponses, strings.SplitAfter(streams[modelroute.OpenAIResponses], "\n\n")[0], false},
		{modelroute.OpenAIChat, streams[modelroute.OpenAIChat], true},
		{modelroute.OpenAIChat, "data: {\"choices\":[{\"delta\":{\"content\":\"hi\"}}]}\n\ndata: [DONE]\n\n", false},
	} {
		u, err := modelroute.Relay(&bytes.Buffer{}, nil, strings.NewReader(tc.stream), tc.d, nil)
		if err != nil || u.Final != tc.final {
			t.Errorf("%s %q: %+v, %v; want final %v", tc.d, tc.stream, u, err, tc.final)
		}
	}
}

// TestParseRequestRefusesProviderDials (red team): an agent in a sandbox
// without a network had the provider carry its data to a URL of its
// choosing: Anthropic's mcp_servers (the provider connects to the named
// MCP server) and web_fetch server tool, OpenAI Responses' remote mcp
// tool. Each is refused before anything is sent; the agent's own
// (client) tools, and provider tools that name no destination, pass.
func TestParseRequestRefusesProviderDials(t *testing.T) {
	a, o := modelroute.AnthropicMessages, modelroute.OpenAIResponses
	for _, tc := range []struct {
		d    modelroute.Dialect
		body string
	}{
		{a, `{"model":"m","mcp_servers":[{"type":"url","url":"https://exfil.example/mcp","name":"x"}]}`},
		{a, `{"model":"m","mcp_servers":{}}`},
		{a, `{"model":"m","tools":[{"name":"Read","input_schema":{}},{"type":"web_fetch_20250910","name":"web_fetch"}]}`},
		{a, `{"model":"m","tools":[{"type":"web_fetch_20990101","name":"web_fetch"}]}`},
		{o, `{"model":"m","tools":[{"type":"function","name":"f"},{"type":"mcp","server_label":"x","server_url":"https://exfil.example/mcp"}]}`},
	} {
		if _, err := modelroute.ParseRequest(tc.d, "POST", tc.d.Path(), "", []byte(tc.body)); !errors.Is(err, modelroute.CodeModelToolRefused) {
			t.Errorf("%s %s: %v, want model_tool_refused", tc.d, tc.body, err)
		}
	}
	for _, tc := range []struct {
		d    modelroute.Dialect
		body string
	}{
		{a, `{"model":"m","mcp_servers":null,"tools":[{"name":"Read","input_schema":{"type":"object"}},{"type":"custom","name":"c"}]}`},
		{a, `{"model":"m","mcp_servers":[]}`},
		{o, `{"model":"m","tools":[{"type":"function","name":"f"},{"type":"custom","name":"apply_patch"},{"type":"namespace","name":"mcp__checkfu","tools":[]}]}`},
		{o, `{"model":"m","mcp_servers":[{"url":"ignored by this dialect"}]}`},
		{modelroute.OpenAIChat, `{"model":"m","tools":[{"type":"function","function":{"name":"f"}}]}`},
	} {
		if _, err := modelroute.ParseRequest(tc.d, "POST", tc.d.Path(), "", []byte(tc.body)); err != nil {
			t.Errorf("%s %s: %v, want allowed", tc.d, tc.body, err)
		}
	}
	if _, err := modelroute.ParseRequest(a, "POST", a.Path(), "", []byte(`{"model":"m","tools":[{"type":7}]}`)); !errors.Is(err, modelroute.CodeModelRequestInvalid) {
		t.Errorf("a tool type that is not a string: %v", err)
	}
}

// TestRelayBatchBoundMisaligned (red team): a provider whose reads end
// inside an event (1000-byte events in 64 KiB reads) kept the relay
// from ever finding its buffer empty at an event's end, so it held the
// whole stream (20 MB here) as one batch: the plane's memory grew with
// the answer, and the agent saw nothing until the stream ended. A batch
// is now written once its whole events reach MaxBatchBytes, so no batch
// is longer than MaxBatchBytes plus one event, and the stream arrives
// byte for byte.
func TestRelayBatchBoundMisaligned(t *testing.T) {
	const size, n = 1000, 20000
	ev := "data: " + strings.Repeat("x", size-len("data: ")-2) + "\n\n"
	var out bytes.Buffer
	biggest, batches := 0, 0
	_, err := modelroute.Relay(&out, nil, strings.NewReader(strings.Repeat(ev, n)), modelroute.OpenAIChat, func(p []byte) (int, error) {
		biggest, batches = max(biggest, len(p)), batches+1
		return 0, nil
	})
	if err != nil || out.Len() != size*n || out.String() != strings.Repeat(ev, n) {
		t.Fatalf("Relay = %v, wrote %d of %d", err, out.Len(), size*n)
	}
	if biggest > modelroute.MaxBatchBytes+size || biggest < modelroute.MaxBatchBytes {
		t.Fatalf("the biggest batch is %d bytes (of %d batches), want MaxBatchBytes (%d) plus at most one event", biggest, batches, modelroute.MaxBatchBytes)
	}
}

// TestMeterReserve: a request holds the most it may spend until it
// settles; one that would begin while those in flight hold what is left
// waits (a cancelled wait returns the context's error), and begins once
// one of them settles and leaves room; a request alone in flight is
// never refused for its own hold; a spent budget is refused at once.
func TestMeterReserve(t *testing.T) {
	m := modelroute.NewMeter(modelroute.Budget{Requests: 10, Tokens: 1000})
	if h := m.Hold(modelroute.Request{MaxOutput: 64}, 90); h != 154 {
		t.Fatalf("Hold with a cap = %d, want 154", h)
	}
	if h := m.Hold(modelroute.Request{}, 90); h != 1000 {
		t.Fatalf("Hold without a cap = %d, want the whole budget", h)
	}
	// A watchdog, not a timing assertion: a wait that never ends fails.
	ctx, stop := context.WithTimeout(context.Background(), 10*time.Second)
	defer stop()
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if err := m.Reserve(ctx, 5000); err != nil {
		t.Fatalf("a request alone, holding more than the budget: %v", err)
	}
	first := modelroute.Request{MaxOutput: 5000}
	m.Settle(first, 5000, 200, modelroute.Usage{InputTokens: 50, OutputTokens: 50, Final: true})
	if err := m.Reserve(ctx, 600); err != nil {
		t.Fatal(err)
	}
	if err := m.Reserve(ctx, 300); err != nil {
		t.Fatalf("100 used and 600 held of 1000: %v", err)
	}
	if err := m.Reserve(cancelled, 100); !errors.Is(err, context.Canceled) {
		t.Fatalf("100 used and 900 held of 1000: %v, want it to wait", err)
	}
	done := make(chan error, 1)
	go func() { done <- m.Reserve(ctx, 100) }()
	for modelroute.Waiting(m) != 1 {
		if ctx.Err() != nil {
			t.Fatal("the request never waited")
		}
		time.Sleep(time.Millisecond) // polling a counter, not a synchronisation
	}
	m.Settle(modelroute.Request{MaxOutput: 600}, 600, 200, modelroute.Usage{InputTokens: 100, OutputTokens: 100, Final: true})
	if err := <-done; err != nil {
		t.Fatalf("after a settle left room: %v", err)
	}
	if u := m.Used(); u.Requests != 4 || u.Tokens != 300 {
		t.Fatalf("used %+v, want 4 requests and 300 tokens", u)
	}
	m.Settle(modelroute.Request{}, 0, 0, modelroute.Usage{InputTokens: 700})
	if err := m.Reserve(cancelled, 1); !errors.Is(err, modelroute.CodeModelBudgetExhausted) {
		t.Fatalf("a spent budget: %v, want model_budget_exhausted at once", err)
	}
}

// TestCountTokens: a token count goes to the registered resource
// followed by "/count_tokens", never to the agent's path; it holds no
// tokens, does not wait for the requests in flight (it can overrun
// nothing), spends one request, and is charged no tokens whatever its
// answer reports, while a Messages answer without usage is still
// charged as cut.
func TestCountTokens(t *testing.T) {
	const resource = "https://api.anthropic.com/v1/messages"
	count, err := modelroute.ParseRequest(modelroute.AnthropicMessages, "POST", "/v1/messages/count_tokens", "beta=true", []byte(`{"model":"m","messages":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	msg, err := modelroute.ParseRequest(modelroute.AnthropicMessages, "POST", "/v1/messages", "beta=true", []byte(`{"model":"m","messages":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := count.Upstream(resource); got != resource+"/count_tokens" {
		t.Errorf("a token count goes to %q", got)
	}
	if got := msg.Upstream(resource); got != resource {
		t.Errorf("a Messages request goes to %q", got)
	}
	m := modelroute.NewMeter(modelroute.Budget{Requests: 3, Tokens: 1000})
	if h := m.Hold(count, 40); h != 0 {
		t.Errorf("a token count holds %d tokens", h)
	}
	// A Messages request without a cap holds the whole budget; a token
	// count begins anyway (a cancelled context would end a wait).
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	hold := m.Hold(msg, 40)
	if err := m.Reserve(context.Background(), hold); err != nil {
		t.Fatal(err)
	}
	if err := m.Reserve(ctx, m.Hold(count, 40)); err != nil {
		t.Fatalf("a token count while the budget is held: %v, want it to begin", err)
	}
	for _, tc := range []struct {
		status int
		u      modelroute.Usage
	}{{200, modelroute.Usage{}}, {200, modelroute.Usage{InputTokens: 500, OutputTokens: 5, Final: true}}, {429, modelroute.Usage{InputTokens: 5}}} {
		if got := m.Settle(count, 0, tc.status, tc.u); got != (modelroute.Usage{}) || m.Used().Tokens != 0 {
			t.Errorf("a token count answered %d %+v was charged %+v, used %d", tc.status, tc.u, got, m.Used().Tokens)
		}
	}
	if u := m.Used(); u.Requests != 2 {
		t.Errorf("used %+v, want 2 requests", u)
	}
	// The same answer to a Messages request is charged as cut: its
	// body's length and the rest of the budget.
	if got := m.Settle(msg, hold, 200, modelroute.Usage{}); got.InputTokens != msg.Bytes || m.Used().Tokens != 1000 {
		t.Errorf("a Messages answer without usage was charged %+v, used %d", got, m.Used().Tokens)
	}
	if err := m.Reserve(ctx, m.Hold(count, 40)); !errors.Is(err, modelroute.CodeModelBudgetExhausted) {
		t.Errorf("a token count past a spent budget: %v", err)
	}
}

// TestMeterRelease: a reservation released (its request refused after
// Reserve, before anything left) gives back its request and its hold,
// and wakes a request that waited for the hold; releasing more than is
// held never drives the counts negative.
func TestMeterRelease(t *testing.T) {
	m := modelroute.NewMeter(modelroute.Budget{Requests: 1, Tokens: 1000})
	ctx, stop := context.WithTimeout(context.Background(), 10*time.Second) // a watchdog
	defer stop()
	if err := m.Reserve(ctx, 1000); err != nil {
		t.Fatal(err)
	}
	m.Release(1000)
	if u := m.Used(); u.Requests != 0 || u.Tokens != 0 {
		t.Fatalf("after a release: used %+v, want nothing", u)
	}
	if err := m.Reserve(ctx, 1000); err != nil {
		t.Fatalf("the released request's budget: %v", err)
	}
	m.Release(1000)
	m.Release(5000)
	if u := m.Used(); u.Requests != 0 {
		t.Fatalf("a second release: used %+v, want 0 requests", u)
	}
	m = modelroute.NewMeter(modelroute.Budget{Requests: 4, Tokens: 1000})
	if err := m.Reserve(ctx, 1000); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- m.Reserve(ctx, 10) }()
	for modelroute.Waiting(m) != 1 {
		if ctx.Err() != nil {
			t.Fatal("the request never waited")
		}
		time.Sleep(time.Millisecond) // polling a counter, not a synchronisation
	}
	m.Release(1000)
	if err := <-done; err != nil {
		t.Fatalf("after a release left room: %v", err)
	}
}
