package modelroute_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/checkfu/checkfu/gateway/modelroute"
)

// TestParseRequest: the dialect's one method and path (and for
// Anthropic Messages its token count's), a strict JSON object naming a
// model; anything else refused with its code.
func TestParseRequest(t *testing.T) {
	ok := []struct {
		d      modelroute.Dialect
		body   string
		stream bool
	}{
		{modelroute.AnthropicMessages, `{"model":"claude-x","stream":true,"messages":[]}`, true},
		{modelroute.OpenAIResponses, `{"model":"gpt-x","input":"hi"}`, false},
		{modelroute.OpenAIChat, `{"model":"gpt-x","stream":false}`, false},
	}
	for _, c := range ok {
		r, err := modelroute.ParseRequest(c.d, "POST", c.d.Path(), "", []byte(c.body))
		if err != nil || r.Stream != c.stream || r.Dialect != c.d || !strings.HasPrefix(r.Model, strings.Split(c.body, `"`)[3]) {
			t.Errorf("%s %s: %+v, %v", c.d, c.body, r, err)
		}
	}
	d := modelroute.AnthropicMessages
	for _, c := range []struct {
		method, path, query, body string
		code                      error
	}{
		{"GET", "/v1/messages", "", `{"model":"m"}`, modelroute.CodeModelPathRefused},
		{"POST", "/v1/messages/batches", "", `{"model":"m"}`, modelroute.CodeModelPathRefused},
		{"POST", "/v1/messages/count_tokens/x", "", `{"model":"m"}`, modelroute.CodeModelPathRefused},
		{"POST", "/v1/messages/count_tokens/", "", `{"model":"m"}`, modelroute.CodeModelPathRefused},
		{"POST", "/v1/messages/count_tokensx", "", `{"model":"m"}`, modelroute.CodeModelPathRefused},
		{"POST", "/v1/messages/count_tokens/../../models", "", `{"model":"m"}`, modelroute.CodeModelPathRefused},
		{"POST", "/v1/messages//count_tokens", "", `{"model":"m"}`, modelroute.CodeModelPathRefused},
		{"POST", "/count_tokens", "", `{"model":"m"}`, modelroute.CodeModelPathRefused},
		{"GET", "/v1/messages/count_tokens", "", `{"model":"m"}`, modelroute.CodeModelPathRefused},
		{"POST", "/v1/messages/count_tokens", "beta=false", `{"model":"m"}`, modelroute.CodeModelPathRefused},
		{"POST", "/v1/messages/count_tokens", "", `{"messages":[]}`, modelroute.CodeModelRequestInvalid},
		{"POST", "/v1/messages/count_tokens", "", `{"model":"a","model":"b"}`, modelroute.CodeModelRequestInvalid},
		{"POST", "/v1/messages/count_tokens", "", `{"model":"m","mcp_servers":[{"url":"https://exfil.example/mcp"}]}`, modelroute.CodeModelToolRefused},
		{"POST", "/v1/messages/count_tokens", "", `{"model":"m","tools":[{"type":"web_fetch_20250910","name":"web_fetch"}]}`, modelroute.CodeModelToolRefused},
		{"POST", "/v1/messages", "beta=false", `{"model":"m"}`, modelroute.CodeModelPathRefused},
		{"POST", "/v1/messages", "beta=true&x=1", `{"model":"m"}`, modelroute.CodeModelPathRefused},
		{"POST", "/v1/messages/../models", "", `{"model":"m"}`, modelroute.CodeModelPathRefused},
		{"POST", "/api/claude_code/metrics", "", `{"model":"m"}`, modelroute.CodeModelPathRefused},
		{"POST", "/v1/responses", "", `{"model":"m"}`, modelroute.CodeModelPathRefused},
		{"POST", "/v1/messages", "", `{"model":"a","model":"b"}`, modelroute.CodeModelRequestInvalid},
		{"POST", "/v1/messages", "", `{"Model":"a"}`, modelroute.CodeModelRequestInvalid},
		{"POST", "/v1/messages", "", `{"model":""}`, modelroute.CodeModelRequestInvalid},
		{"POST", "/v1/messages", "", `{"model":1}`, modelroute.CodeModelRequestInvalid},
		{"POST", "/v1/messages", "", `{"model":"m","stream":"yes"}`, modelroute.CodeModelRequestInvalid},
		{"POST", "/v1/messages", "", `["model"]`, modelroute.CodeModelRequestInvalid},
		{"POST", "/v1/messages", "", `null`, modelroute.CodeModelRequestInvalid},
		{"POST", "/v1/messages", "", "{\"model\":\"m\xff\"}", modelroute.CodeModelRequestInvalid},
		{"POST", "/v1/messages", "", `{"model":"m"} {}`, modelroute.CodeModelRequestInvalid},
		{"POST", "/v1/messages", "", `{"model":"` + strings.Repeat("m", 257) + `"}`, modelroute.CodeModelRequestInvalid},
	} {
		if _, err := modelroute.ParseRequest(d, c.method, c.path, c.query, []byte(c.body)); !errors.Is(err, c.code) {
			t.Errorf("%s %s?%s %q: %v, want %v", c.method, c.path, c.query, c.body, err, c.code)
		}
	}
	if r, err := modelroute.ParseRequest(d, "POST", "/v1/messages", "beta=true", []byte(`{"model":"m"}`)); err != nil || r.CountTokens {
		t.Errorf("Claude Code's ?beta=true: %+v, %v", r, err)
	}
	for _, q := range []string{"", "beta=true"} {
		r, err := modelroute.ParseRequest(d, "POST", "/v1/messages/count_tokens", q, []byte(`{"model":"m","messages":[]}`))
		if err != nil || !r.CountTokens || r.Model != "m" || r.Dialect != d {
			t.Errorf("Claude Code's count_tokens?%s: %+v, %v", q, r, err)
		}
	}
	// The token count is Anthropic Messages' alone.
	for _, o := range []modelroute.Dialect{modelroute.OpenAIResponses, modelroute.OpenAIChat} {
		for _, p := range []string{o.Path() + "/count_tokens", "/v1/messages/count_tokens", o.Path() + "/input_tokens"} {
			if _, err := modelroute.ParseRequest(o, "POST", p, "", []byte(`{"model":"m"}`)); !errors.Is(err, modelroute.CodeModelPathRefused) {
				t.Errorf("%s %s: %v, want model_path_refused", o, p, err)
			}
		}
		if o.CountTokensPath() != "" || o.Serves("/count_tokens") {
			t.Errorf("%s has a token count path %q", o, o.CountTokensPath())
		}
	}
	if _, err := modelroute.ParseRequest(modelroute.OpenAIResponses, "POST", "/v1/responses", "beta=true", []byte(`{"model":"m"}`)); !errors.Is(err, modelroute.CodeModelPathRefused) {
		t.Errorf("?beta=true on another dialect: %v", err)
	}
	if _, err := modelroute.ParseRequest("gemini", "POST", "", "", []byte(`{"model":"m"}`)); !errors.Is(err, modelroute.CodeModelPathRefused) {
		t.Errorf("an unknown dialect: %v", err)
	}
}

// TestHeadersDropCredentials: only the dialect's listed headers survive;
// every credential- or routing-bearing header the agent sends is dropped.
func TestHeadersDropCredentials(t *testing.T) {
	in := http.Header{}
	for _, h := range []string{"Authorization", "X-Api-Key", "x-goog-api-key", "Api-Key", "Cookie", "Host", "Forwarded",
		"X-Forwarded-For", "X-Forwarded-Host", "Proxy-Authorization", "OpenAI-Organization", "OpenAI-Project",
		"X-Stainless-Helper", "Anthropic-Dangerous-Direct-Browser-Access", "X-Real-Ip", "Via", "User-Agent"} {
		in.Set(h, "placeholder-sk-0000")
	}
	in.Set("content-type", "application/json")
	in.Set("Accept", "text/event-stream")
	in.Set("Anthropic-Version", "2023-06-01")
	in.Set("Anthropic-Beta", "tools-1")
	in.Set("OpenAI-Beta", "responses=v1")
	want := map[modelroute.Dialect][]string{
		modelroute.AnthropicMessages: {"Accept", "Anthropic-Beta", "Anthropic-Version", "Content-Type"},
		modelroute.OpenAIResponses:   {"Accept", "Content-Type", "Openai-Beta"},
		modelroute.OpenAIChat:        {"Accept", "Content-Type"},
	}
	for d, names := range want {
		out := modelroute.Request{Dialect: d}.Headers(in)
		if len(out) != len(names) {
			t.Errorf("%s kept %v", d, out)
		}
		for _, n := range names {
			if out.Get(n) == "" {
				t.Errorf("%s dropped %s", d, n)
			}
		}
		for _, vs := range out {
			for _, v := range vs {
				if strings.Contains(v, "placeholder") {
					t.Errorf("%s kept a credential-bearing header: %v", d, out)
				}
			}
		}
	}
}

// TestPolicyExactModels: exactly the listed models; the zero Policy
// allows none.
func TestPolicyExactModels(t *testing.T) {
	p := modelroute.Policy{Models: []string{"claude-sonnet-4-5", "gpt-5.4"}}
	for model, allowed := range map[string]bool{"claude-sonnet-4-5": true, "gpt-5.4": true, "claude-sonnet-4-5 ": false,
		"claude-sonnet": false, "claude-opus-4": false, "GPT-5.4": false} {
		err := p.Check(modelroute.Request{Model: model})
		if (err == nil) != allowed || (err != nil && !errors.Is(err, modelroute.CodeModelNotAllowed)) {
			t.Errorf("%q: %v", model, err)
		}
	}
	if err := (modelroute.Policy{}).Check(modelroute.Request{Model: "m"}); !errors.Is(err, modelroute.CodeModelNotAllowed) {
		t.Errorf("the zero Policy allowed a model: %v", err)
	}
}

// TestMeterBudget: requests and tokens are spent to exactly the budget,
// then refused before anything is sent.
func TestMeterBudget(t *testing.T) {
	m := modelroute.NewMeter(modelroute.Budget{Requests: 2, Tokens: 1000})
	for i := 0; i < 2; i++ {
		if err := m.Allow(); err != nil {
			t.Fatalf("Allow before request %d: %v", i+1, err)
		}
		if err := reserve(m); err != nil {
			t.Fatalf("request %d: %v", i+1, err)
		}
	}
	if err := m.Allow(); !errors.Is(err, modelroute.CodeModelBudgetExhausted) {
		t.Fatalf("Allow of request 3 past a budget of 2: %v", err)
	}
	if err := reserve(m); !errors.Is(err, modelroute.CodeModelBudgetExhausted) {
		t.Fatalf("request 3 past a budget of 2: %v", err)
	}
	m = modelroute.NewMeter(modelroute.Budget{Requests: 10, Tokens: 1000})
	_ = reserve(m)
	m.Settle(modelroute.Request{}, 0, 0, modelroute.Usage{InputTokens: 900, OutputTokens: 99})
	if err := reserve(m); err != nil {
		t.Fatalf("999 of 1000 tokens: %v", err)
	}
	m.Settle(modelroute.Request{}, 0, 0, modelroute.Usage{InputTokens: 1, OutputTokens: -5})
	if err := reserve(m); !errors.Is(err, modelroute.CodeModelBudgetExhausted) {
		t.Fatalf("1000 of 1000 tokens: %v", err)
	}
	if u := m.Used(); u.Requests != 2 || u.Tokens != 1000 {
		t.Fatalf("Used = %+v", u)
	}
	if err := reserve(modelroute.NewMeter(modelroute.Budget{})); !errors.Is(err, modelroute.CodeModelBudgetExhausted) {
		t.Fatalf("the zero budget allowed a request: %v", err)
	}
}

// streams are each dialect's stream, as the scripted model server sends
// them: input 100 tokens, output 10.
var streams = map[modelroute.Dialect]string{
	modelroute.AnthropicMessages: "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":90,\"cache_read_input_tokens\":10,\"output_tokens\":1}}}\n\n" +
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"delta\":{\"type\":\"text_delta\",\"text\":\"hi\"}}\n\n" +
		"event: message_delta\ndata: {\"type\":\"message_delta\",\"usage\":{\"output_tokens\":10}}\n\n" +
		"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
	modelroute.OpenAIResponses: "event: response.created\ndata: {\"type\":\"response.created\",\"response\":{}}\n\n" +
		"event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"delta\":\"hi\"}\n\n" +
		"event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"usage\":{\"input_tokens\":100,\"output_tokens\":10,\"total_tokens\":110}}}\n\n",
	modelroute.OpenAIChat: "data: {\"choices\":[{\"delta\":{\"content\":\"hi\"}}]}\n\n" +
		"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":100,\"completion_tokens\":10}}\n\n" +
		"data: [DONE]\n\n",
}

// TestRelayStreamsAsItArrives: each event reaches the agent before the
// provider sends the next, the stream arrives byte for byte, and the
// usage is read for every dialect.
func TestRelayStreamsAsItArrives(t *testing.T) {
	for d, stream := range streams {
		events := strings.SplitAfter(stream, "\n\n")
		events = events[:len(events)-1]
		srcR, srcW := io.Pipe()
		dstR, dstW := io.Pipe()
		type result struct {
			u   modelroute.Usage
			err error
		}
		done := make(chan result, 1)
		go func() {
			u, err := modelroute.Relay(dstW, nil, srcR, d, nil)
			dstW.Close()
			done <- result{u, err}
		}()
		br := bufio.NewReader(dstR)
		var got strings.Builder
		for _, ev := range events {
			go srcW.Write([]byte(ev))
			// The event arrives whole before the next is sent.
			buf := make([]byte, len(ev))
			read := make(chan error, 1)
			go func() {
				_, err := io.ReadFull(br, buf)
				read <- err
			}()
			select {
			case err := <-read:
				if err != nil || string(buf) != ev {
					t.Fatalf("%s: read %q, %v; want %q", d, buf, err, ev)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("%s: event %q did not reach the agent before the next was sent", d, ev)
			}
			got.Write(buf)
		}
		srcW.Close()
		r := <-done
		if r.err != nil || r.u != (modelroute.Usage{InputTokens: 100, OutputTokens: 10, Final: true}) {
			t.Errorf("%s: usage %+v, %v", d, r.u, r.err)
		}
		if got.String() != stream {
			t.Errorf("%s: relayed %q", d, got.String())
		}
	}
}

// TestRelayScreensEachEvent: an event the screen refuses reaches the agent
// in no part, and the relay stops there.
func TestRelayScreensEachEvent(t *testing.T) {
	stream := "data: {\"a\":1}\n\ndata: {\"text\":\"sk-CANARY-1\"}\n\ndata: {\"b\":2}\n\n"
	screenErr := errors.New("echoed")
	var out bytes.Buffer
	_, err := modelroute.Relay(&out, nil, strings.NewReader(stream), modelroute.OpenAIChat, func(p []byte) (int, error) {
		if bytes.Contains(p, []byte("CANARY")) {
			return 0, screenErr
		}
		return 0, nil
	})
	if !errors.Is(err, screenErr) || out.Len() != 0 {
		t.Fatalf("Relay of a stream that arrived at once = %v, wrote %q", err, out.String())
	}
	// Arriving event by event, the event before the echo goes out, the
	// echo and everything after it do not.
	out.Reset()
	srcR, srcW := io.Pipe()
	go func() {
		for _, ev := range strings.SplitAfter(stream, "\n\n") {
			srcW.Write([]byte(ev))
		}
		srcW.Close()
	}()
	_, err = modelroute.Relay(&out, nil, srcR, modelroute.OpenAIChat, func(p []byte) (int, error) {
		if bytes.Contains(p, []byte("CANARY")) {
			return 0, screenErr
		}
		return 0, nil
	})
	srcR.Close()
	if !errors.Is(err, screenErr) || out.String() != "data: {\"a\":1}\n\n" {
		t.Fatalf("Relay = %v, wrote %q", err, out.String())
	}
	out.Reset()
	if _, err := modelroute.RelayAnswer(&out, strings.NewReader(`{"text":"sk-CANARY-1"}`), modelroute.OpenAIChat, func(p []byte) (int, error) {
		if bytes.Contains(p, []byte("CANARY")) {
			return 0, screenErr
		}
		return 0, nil
	}); !errors.Is(err, screenErr) || out.Len() != 0 {
		t.Fatalf("RelayAnswer = %v, wrote %q", err, out.String())
	}
}

// TestRelayEventBound: an event of exactly MaxEventBytes passes; one
// byte more is refused and nothing of it is written.
func TestRelayEventBound(t *testing.T) {
	for _, n := range []int{modelroute.MaxEventBytes, modelroute.MaxEventBytes + 1} {
		ev := "data: " + strings.Repeat("x", n-len("data: ")-2) + "\n\n"
		var out bytes.Buffer
		_, err := modelroute.Relay(&out, nil, strings.NewReader(ev), modelroute.OpenAIChat, nil)
		if n == modelroute.MaxEventBytes && (err != nil || out.Len() != n) {
			t.Fatalf("an event of the bound: %v, wrote %d", err, out.Len())
		}
		if n > modelroute.MaxEventBytes && (!errors.Is(err, modelroute.CodeModelEventTooLarge) || out.Len() != 0) {
			t.Fatalf("an event over the bound: %v, wrote %d", err, out.Len())
		}
	}
}

// TestRelayAnswerUsage: a whole answer's usage, per dialect.
func TestRelayAnswerUsage(t *testing.T) {
	for d, body := range map[modelroute.Dialect]string{
		modelroute.AnthropicMessages: `{"type":"message","usage":{"input_tokens":100,"output_tokens":10}}`,
		modelroute.OpenAIResponses:   `{"object":"response","usage":{"input_tokens":100,"output_tokens":10}}`,
		modelroute.OpenAIChat:        `{"object":"chat.completion","usage":{"prompt_tokens":100,"completion_tokens":10}}`,
	} {
		var out bytes.Buffer
		u, err := modelroute.RelayAnswer(&out, strings.NewReader(body), d, nil)
		if err != nil || u != (modelroute.Usage{InputTokens: 100, OutputTokens: 10, Final: true}) || out.String() != body {
			t.Errorf("%s: %+v, %v, %q", d, u, err, out.String())
		}
	}
}

// FuzzParseRequest: no input panics, and an accepted request names a
// non-empty model of one of the dialect's paths: its own, or, for
// Anthropic Messages alone, its token count's (and is then marked so).
func FuzzParseRequest(f *testing.F) {
	f.Add("/v1/messages", `{"model":"m","stream":true}`)
	f.Add("/v1/messages", `{"model":"a","model":"b"}`)
	f.Add("/v1/responses", `{"model":"\u0000"}`)
	f.Add("/v1/messages/count_tokens", `{"model":"m","messages":[]}`)
	f.Add("/v1/responses/count_tokens", `{"model":"m"}`)
	f.Fuzz(func(t *testing.T, path, body string) {
		for _, d := range []modelroute.Dialect{modelroute.AnthropicMessages, modelroute.OpenAIResponses, modelroute.OpenAIChat} {
			r, err := modelroute.ParseRequest(d, "POST", path, "", []byte(body))
			if err != nil {
				continue
			}
			count := d == modelroute.AnthropicMessages && path == "/v1/messages/count_tokens"
			if r.Model == "" || path != d.Path() && !count || r.CountTokens != count {
				t.Fatalf("%s accepted %q %q as %+v", d, path, body, r)
			}
		}
	})
}

// FuzzRelay: no stream panics the relay, what it writes is always a
// prefix of the stream made of whole events, and the usage it reads is
// never negative when the stream's numbers are not.
func FuzzRelay(f *testing.F) {
	for _, s := range streams {
		f.Add(s)
	}
	f.Add("data: {\"usage\":{\"prompt_tokens\":1e400}}\n\n")
	f.Add("data: x\r\n\r\ndata: [DONE]\n\n")
	f.Add("event: a\ndata: {\"type\":\"message_start\",\"message\":null}\n\n")
	f.Add("data: {\"usageMetadata\":{\"promptTokenCount\":1},\"candidates\":[{\"finishReason\":\"STOP\"}]}\n\n")
	f.Fuzz(func(t *testing.T, stream string) {
		for _, d := range []modelroute.Dialect{modelroute.AnthropicMessages, modelroute.OpenAIResponses, modelroute.OpenAIChat, modelroute.Gemini} {
			var out bytes.Buffer
			_, _ = modelroute.Relay(&out, nil, strings.NewReader(stream), d, nil)
			if !strings.HasPrefix(stream, out.String()) {
				t.Fatalf("%s wrote %q, not a prefix of %q", d, out.String(), stream)
			}
			// Whatever is written ends with the blank line that ends an
			// event: a line of nothing but carriage returns, then its
			// newline (the relay's blank line, trimEOL).
			if w := out.String(); w != "" {
				rest := strings.TrimRight(strings.TrimSuffix(w, "\n"), "\r")
				if !strings.HasSuffix(w, "\n") || (rest != "" && !strings.HasSuffix(rest, "\n")) {
					t.Fatalf("%s wrote a partial event: %q", d, w)
				}
			}
		}
	})
}

// TestRelayBatchBound: a stream that has arrived at once is screened and
// written in batches of the whole events one read of MaxBatchBytes
// completes.
func TestRelayBatchBound(t *testing.T) {
	ev := "data: " + strings.Repeat("x", 1024-len("data: ")-2) + "\n\n"
	const n = 3*modelroute.MaxBatchBytes/1024 + 7
	var sizes []int
	var out bytes.Buffer
	_, err := modelroute.Relay(&out, nil, strings.NewReader(strings.Repeat(ev, n)), modelroute.OpenAIChat, func(p []byte) (int, error) {
		sizes = append(sizes, len(p))
		return 0, nil
	})
	if err != nil || out.Len() != n*1024 {
		t.Fatalf("Relay = %v, wrote %d of %d", err, out.Len(), n*1024)
	}
	want := []int{modelroute.MaxBatchBytes, modelroute.MaxBatchBytes, modelroute.MaxBatchBytes, 7 * 1024}
	if fmt.Sprint(sizes) != fmt.Sprint(want) {
		t.Fatalf("batches %v, want %v", sizes, want)
	}
}

// reserve reserves one request with no hold, giving up after ten
// seconds: a Meter that should refuse at once but waits instead fails
// the test rather than hang it.
func reserve(m *modelroute.Meter) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return m.Reserve(ctx, 0)
}

// TestRelayEventBoundInLines: an event of many short lines (each whole
// in one read, so framed where it lies in the read buffer) of exactly
// MaxEventBytes passes; one byte more is refused and nothing of it is
// written, nor the event after it. In reads of any size.
func TestRelayEventBoundInLines(t *testing.T) {
	line := "data: " + strings.Repeat("x", 1000-len("data: ")-1) + "\n"
	for _, n := range []int{modelroute.MaxEventBytes, modelroute.MaxEventBytes + 1} {
		body := strings.Repeat(line, (n-1)/len(line))
		body += "data: " + strings.Repeat("y", n-1-len(body)-len("data: ")-1) + "\n\n"
		stream := "data: first\n\n" + body + "data: after\n\n"
		for _, read := range []int{1000, 4096, 64 << 10} {
			var out bytes.Buffer
			_, err := modelroute.Relay(&out, nil, &sized{strings.NewReader(stream), read}, modelroute.OpenAIChat, nil)
			if n == modelroute.MaxEventBytes && (err != nil || out.String() != stream) {
				t.Fatalf("an event of the bound in %d-byte reads: %v, wrote %d of %d", read, err, out.Len(), len(stream))
			}
			if n > modelroute.MaxEventBytes && (!errors.Is(err, modelroute.CodeModelEventTooLarge) || strings.Contains(out.String(), "y") || strings.Contains(out.String(), "after")) {
				t.Fatalf("an event over the bound in %d-byte reads: %v, wrote %d", read, err, out.Len())
			}
		}
	}
}

// sized reads at most n bytes at a time.
type sized struct {
	r io.Reader
	n int
}

func (s *sized) Read(p []byte) (int, error) { return s.r.Read(p[:min(len(p), s.n)]) }

// failAfter returns first on its first Read, then err.
type failAfter struct {
	first []byte
	err   error
}

func (f *failAfter) Read(p []byte) (int, error) {
	if f.first == nil {
		return 0, f.err
	}
	n := copy(p, f.first)
	f.first = f.first[n:]
	if len(f.first) == 0 {
		f.first = nil
	}
	return n, nil
}

// TestRelayScreenRefusalComesFirst: when the screen refuses a batch and
// the provider's stream then fails before Relay hears of the refusal,
// Relay returns the refusal (the credential echo, the code the event
// records), not the read error that came after it.
func TestRelayScreenRefusalComesFirst(t *testing.T) {
	screenErr, readErr := errors.New("echoed"), errors.New("the provider's connection reset")
	for range 20 {
		var out bytes.Buffer
		src := &failAfter{first: []byte("data: {\"text\":\"sk-CANARY-1\"}\n\n"), err: readErr}
		_, err := modelroute.Relay(&out, nil, src, modelroute.OpenAIChat, func(p []byte) (int, error) {
			if bytes.Contains(p, []byte("CANARY")) {
				return 0, screenErr
			}
			return 0, nil
		})
		if !errors.Is(err, screenErr) || out.Len() != 0 {
			t.Fatalf("Relay = %v, wrote %q; want the screen's refusal first and nothing written", err, out.String())
		}
	}
}
