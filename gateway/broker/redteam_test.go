package broker_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/checkfu/checkfu/custody/authz"
	"github.com/checkfu/checkfu/gateway/broker"
	"github.com/checkfu/checkfu/gateway/internal/rigtest"
	"github.com/checkfu/checkfu/gateway/modelroute"
)

// waitResults waits until the rig holds n model_result events (a call's
// result is recorded after the agent's side of it ended), and returns
// them.
func waitResults(t *testing.T, r *rigtest.Rig, n int) []authz.Evidence {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		var got []authz.Evidence
		for _, ev := range r.Evidence.Events() {
			if ev.Kind == authz.EvidenceModelResult {
				got = append(got, ev)
			}
		}
		if len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d model results recorded, want %d", len(got), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestModelStreamCutBeforeUsageIsCharged (red team): an agent that reads
// a long answer's text and hangs up before the provider's final usage
// event (Anthropic's message_delta) would have spent the output tokens
// the provider produced and bills, and the token budget would not see
// them. A 2xx answer that ends without its final usage is charged the
// request's own output cap (max_tokens) on top of what was reported.
func TestModelStreamCutBeforeUsageIsCharged(t *testing.T) {
	r := rigtest.NewModelBudget(t, modelroute.Budget{Requests: 10, Tokens: 1000})
	r.Grant(rigtest.ModelCapability)
	hungUp := make(chan struct{})
	r.Model.SetHandler(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"usage\":{\"input_tokens\":100,\"output_tokens\":1}}}\n\n")
		for range 3 {
			io.WriteString(w, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"a long answer\"}}\n\n")
		}
		w.(http.Flusher).Flush()
		select {
		case <-req.Context().Done(): // the route hung up: the agent did
			close(hungUp)
		case <-time.After(10 * time.Second):
		}
		// What the provider would have said had anyone listened.
		io.WriteString(w, "event: message_delta\ndata: {\"type\":\"message_delta\",\"usage\":{\"output_tokens\":900}}\n\n")
	}))
	c := modelClient(t, rigtest.ServeBroker(t, mustBroker(t, r)))
	req, _ := http.NewRequest("POST", "http://door/v1/messages", strings.NewReader(`{"model":"`+rigtest.AllowedModel+`","stream":true,"max_tokens":4096,"messages":[]}`))
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(resp.Body)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("the stream ended before its text: %v", err)
		}
		if strings.Contains(line, "a long answer") {
			break
		}
	}
	resp.Body.Close() // hang up before the usage
	select {
	case <-hungUp:
	case <-time.After(10 * time.Second):
		t.Fatal("the provider never saw the agent hang up")
	}
	res := waitResults(t, r, 1)
	if res[0].OutputTokens < 4096 {
		t.Errorf("a stream cut before its usage was charged out=%d, want the request's max_tokens 4096", res[0].OutputTokens)
	}
	r.Model.SetHandler(nil)
	if status, body := post(t, c, "POST", "/v1/messages", allowed); status != 403 || !strings.Contains(body, "model_budget_exhausted") {
		t.Fatalf("after a cut stream of max_tokens 4096 on a budget of 1000 tokens: %d %q", status, body)
	}
}

// TestModelStreamWithoutUsageIsCharged (red team): a 2xx stream that
// ends normally without reporting usage (an OpenAI Responses stream with
// no response.completed; Chat Completions streams report none unless the
// client asks) would have cost the token budget nothing. With no output
// cap in the request, it is charged the rest of the budget.
func TestModelStreamWithoutUsageIsCharged(t *testing.T) {
	r := rigtest.NewModelBudget(t, modelroute.Budget{Requests: 10, Tokens: 1000})
	r.Grant(rigtest.OpenAICapability)
	r.Model.SetHandler(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"id\":\"r\"}}\n\n")
		io.WriteString(w, "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"delta\":\"text\"}\n\n")
	}))
	c := modelClient(t, rigtest.ServeBroker(t, mustBroker(t, r)))
	body := `{"model":"` + rigtest.OpenAIModel + `","stream":true,"input":"hi"}`
	if status, got := post(t, c, "POST", "/v1/responses", body); status != 200 || !strings.Contains(got, "output_text.delta") {
		t.Fatalf("the stream: %d %q", status, got)
	}
	res := waitResults(t, r, 1)
	if res[0].InputTokens+res[0].OutputTokens < 1000 {
		t.Errorf("a stream without usage was charged in=%d out=%d, want the rest of the budget", res[0].InputTokens, res[0].OutputTokens)
	}
	if status, got := post(t, c, "POST", "/v1/responses", body); status != 403 || !strings.Contains(got, "model_budget_exhausted") {
		t.Fatalf("after a stream without usage: %d %q", status, got)
	}
	// An error answer (no usage, nothing billed) is charged nothing: a
	// provider's 429 must not spend the budget.
	r2 := rigtest.NewModelBudget(t, modelroute.Budget{Requests: 10, Tokens: 1000})
	r2.Grant(rigtest.OpenAICapability)
	r2.Model.SetHandler(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusTooManyRequests)
		fmt.Fprint(w, `{"error":{"type":"rate_limit"}}`)
	}))
	c2 := modelClient(t, rigtest.ServeBroker(t, mustBroker(t, r2)))
	for range 3 {
		if status, got := post(t, c2, "POST", "/v1/responses", body); status != 429 {
			t.Fatalf("a rate-limited call: %d %q", status, got)
		}
	}
	if res := waitResults(t, r2, 3); res[2].InputTokens+res[2].OutputTokens != 0 {
		t.Errorf("an error answer was charged in=%d out=%d", res[2].InputTokens, res[2].OutputTokens)
	}
}

// mustBroker builds a broker over the member's channel of r.
func mustBroker(t *testing.T, r *rigtest.Rig) *broker.Broker {
	t.Helper()
	b, err := broker.New(r.Channel(rigtest.Member()))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// modelBody is a valid streamed Messages request of exactly n bytes.
func modelBody(n int) []byte {
	head := `{"model":"` + rigtest.AllowedModel + `","stream":true,"pad":"`
	b := []byte(head + strings.Repeat("x", n-len(head)-2) + `"}`)
	return b
}

// TestModelBodiesHeldBound (red team): the broker read each model
// request's body whole (up to modelroute.MaxRequestBytes, 32 MiB) on
// each of its MaxModelConnections (16) connections at once, and held it
// for the whole call: 512 MiB of the plane's memory, and a copy more in
// the pipeline. Now the bodies held at once are bounded by
// broker.MaxModelHeldBytes: two requests of the largest size are held at
// exactly the bound while their calls are in flight, and one byte more
// is refused (model_bytes_exceeded) and recorded; once a call ends its
// bytes are free again.
func TestModelBodiesHeldBound(t *testing.T) {
	if broker.MaxModelHeldBytes != 2*modelroute.MaxRequestBytes {
		t.Fatalf("MaxModelHeldBytes = %d, the test holds two bodies of MaxRequestBytes", broker.MaxModelHeldBytes)
	}
	r := rigtest.NewModelBudget(t, modelroute.Budget{Requests: 10, Tokens: 1 << 20})
	r.Grant(rigtest.ModelCapability)
	arrived, release := make(chan struct{}, 2), make(chan struct{})
	r.Model.SetHandler(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		arrived <- struct{}{}
		select {
		case <-release:
		case <-time.After(20 * time.Second):
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"type":"message","usage":{"input_tokens":1,"output_tokens":1}}`)
	}))
	c := modelClient(t, rigtest.ServeBroker(t, mustBroker(t, r)))
	body := modelBody(modelroute.MaxRequestBytes)
	done := make(chan int, 2)
	for range 2 {
		go func() {
			resp, err := c.Post("http://door/v1/messages", "application/json", bytes.NewReader(body))
			if err != nil {
				done <- 0
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			done <- resp.StatusCode
		}()
	}
	for range 2 {
		select {
		case <-arrived: // the broker has read that body whole
		case <-time.After(30 * time.Second):
			close(release)
			t.Fatal("a largest body at the bound never reached the provider")
		}
	}
	status, got := post(t, c, "POST", "/v1/messages", "{")
	close(release)
	if status != http.StatusServiceUnavailable || !strings.Contains(got, `"refused: model_bytes_exceeded"`) {
		t.Errorf("one byte past the bodies held: %d %q, want 503 model_bytes_exceeded", status, got)
	}
	for range 2 {
		if s := <-done; s != 200 {
			t.Errorf("a body at the bound: %d, want 200", s)
		}
	}
	if n := refusals(r, broker.CodeModelBytesExceeded); n != 1 {
		t.Errorf("%d model_bytes_exceeded refusals recorded, want 1", n)
	}
	r.Model.SetHandler(nil)
	if status, got := post(t, c, "POST", "/v1/messages", allowed); status != 200 {
		t.Errorf("after the calls ended: %d %q", status, got)
	}
	// A body one byte over MaxRequestBytes is refused as invalid, sent
	// with a length or chunked.
	long := append(modelBody(modelroute.MaxRequestBytes), ' ')
	for _, chunked := range []bool{false, true} {
		var rd io.Reader = bytes.NewReader(long)
		if chunked {
			rd = io.MultiReader(rd) // no length known: sent chunked
		}
		resp, err := c.Post("http://door/v1/messages", "application/json", rd)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 400 || !strings.Contains(string(got), "model_request_invalid") {
			t.Errorf("a body of MaxRequestBytes+1 (chunked %v): %d %q", chunked, resp.StatusCode, got)
		}
	}
	if n := len(r.Model.Received()); n != 3 {
		t.Errorf("the provider received %d requests, want 3", n)
	}
}
