package broker_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
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
			// The final usage is never sent. Written now, it could
			// still be read: the server sees the route's TLS
			// close_notify before the connection closes, and the
			// route's last read races that close (then it is rightly
			// charged what it reports, which is not this test).
			return
		case <-time.After(10 * time.Second):
		}
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
	head := `{"model":"` + rigtest.AllowedModel + `","stream":true,"max_tokens":8,"pad":"`
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
// bodyArrivalWait is how long TestModelBodiesHeldBound waits for a body
// at the bound to reach the provider: a hang guard, not a speed check.
const bodyArrivalWait = 3 * time.Minute

func TestModelBodiesHeldBound(t *testing.T) {
	if broker.MaxModelHeldBytes != 2*modelroute.MaxRequestBytes {
		t.Fatalf("MaxModelHeldBytes = %d, the test holds two bodies of MaxRequestBytes", broker.MaxModelHeldBytes)
	}
	// Tokens enough for both bodies' holds (their length and max_tokens)
	// at once.
	r := rigtest.NewModelBudget(t, modelroute.Budget{Requests: 10, Tokens: 1 << 40})
	r.Grant(rigtest.ModelCapability)
	// The provider holds both calls until the test has tried the third:
	// a call answered early would free its body's hold and let the third
	// in. Under -race on a loaded machine, reading and checking two
	// 32 MiB bodies has taken over 30 s, so nothing here is timed but
	// the wait for them (bodyArrivalWait), and release is closed on every
	// path.
	arrived, release := make(chan struct{}, 2), make(chan struct{})
	var releaseOnce sync.Once
	free := func() { releaseOnce.Do(func() { close(release) }) }
	t.Cleanup(free)
	var calls atomic.Int32
	r.Model.SetHandler(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		// Only the two bodies at the bound are held: a third call that
		// got through (the bound broken) is answered at once, and fails
		// the test below rather than hanging it.
		if calls.Add(1) <= 2 {
			arrived <- struct{}{}
			<-release
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
		case <-time.After(bodyArrivalWait):
			free()
			t.Fatal("a largest body at the bound never reached the provider")
		}
	}
	status, got := post(t, c, "POST", "/v1/messages", "{")
	free()
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

// rawExchange writes req on a new connection to the socket and reads the
// answers (as many as n) to it.
func rawExchange(t *testing.T, sock, req string, n int) []*http.Response {
	t.Helper()
	nc := dialRaw(t, sock)
	nc.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := io.WriteString(nc, req); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(nc)
	var out []*http.Response
	for range n {
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("answer %d of %q: %v", len(out)+1, req, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body = io.NopCloser(bytes.NewReader(body))
		out = append(out, resp)
	}
	return out
}

// TestModelRouteRawRequestsHeld (red team, held): requests written
// byte by byte on the socket as a hostile agent would, with an
// absolute-form target naming another host, a forged Host, the
// placeholder in every casing and spelling of a key header, a
// Connection header naming a kept header, and a model spelled with a
// unicode escape, reach the provider as the registration says: its
// host, path and method, the key once in x-api-key, no placeholder. Dot
// segments, encoded dots, empty segments, path parameters, CONNECT, a
// model in the query, and a refused request pipelined behind an allowed
// one (or "smuggled" behind a chunked body with a conflicting
// Content-Length) never reach it.
func TestModelRouteRawRequestsHeld(t *testing.T) {
	r := rigtest.NewModelBudget(t, modelroute.Budget{Requests: 10, Tokens: 1 << 20})
	r.Grant(rigtest.ModelCapability)
	sock := rigtest.ServeBroker(t, mustBroker(t, r))
	body := `{"model":"\u0063laude-sonnet-4-5","stream":true,"max_tokens":8}`
	req := func(target string, extra string, body string) string {
		return "POST " + target + " HTTP/1.1\r\nHost: evil.example\r\n" + extra +
			"Content-Type: application/json\r\nAnthropic-Version: 2023-06-01\r\n" +
			"Content-Length: " + fmt.Sprint(len(body)) + "\r\n\r\n" + body
	}
	keys := "x-api-key: " + placeholder + "\r\nX-API-KEY: " + placeholder + "\r\nX_Api_Key: " + placeholder + "\r\n" +
		"authorization: Bearer " + placeholder + "\r\nProxy-Authorization: Basic " + placeholder + "\r\n" +
		"Forwarded: host=evil.example\r\nX-Forwarded-Host: evil.example\r\nConnection: keep-alive, Anthropic-Version, X-Api-Key\r\n"
	resp := rawExchange(t, sock, req("http://evil.example:8443/v1/messages?beta=true", keys, body), 1)[0]
	if resp.StatusCode != 200 {
		t.Fatalf("the allowed request: %d", resp.StatusCode)
	}
	got := r.Model.Received()
	if len(got) != 1 {
		t.Fatalf("the provider received %d requests, want 1", len(got))
	}
	up := got[0]
	if !strings.HasPrefix(up.Host, "model.example.com:") || up.Path != "/v1/messages" || up.RawQuery != "" || up.Method != "POST" {
		t.Errorf("the provider got %s %s?%s at %s", up.Method, up.Path, up.RawQuery, up.Host)
	}
	if vs := up.Header.Values("X-Api-Key"); len(vs) != 1 || vs[0] != rigtest.ModelCanary {
		t.Errorf("x-api-key at the provider: %q, want the key once", vs)
	}
	for name, vs := range up.Header {
		for _, v := range vs {
			if strings.Contains(v, placeholder) || strings.Contains(v, "evil.example") {
				t.Errorf("the agent's %s reached the provider: %q", name, v)
			}
		}
	}
	for _, tc := range []struct {
		raw    string
		status int
	}{
		{req("/v1/%2e%2e/v1/messages", "", body), 404},
		{req("/v1/messages/%2e%2e/messages", "", body), 404},
		{req("/v1//messages", "", body), 404},
		{req("/v1/messages;beta=true", "", body), 404},
		{req("/v1/messages?model=claude-opus-4", "", body), 404},
		{req("/v1/messages", "", `{"model":"claude-opus-4","stream":true}`), 403},
		{req("/v1/messages", "", `{"model":"Claude-Sonnet-4-5","stream":true}`), 403},
		{req("/v1/messages", "", `{"model":"claude-sonnet-4-5 ","stream":true}`), 403},
		{req("/v1/messages", "", `{"model":"claude-opus-4","MODEL":"claude-sonnet-4-5"}`), 400},
		{"CONNECT model.example.com:443 HTTP/1.1\r\nHost: model.example.com:443\r\n\r\n", 404},
	} {
		if resp := rawExchange(t, sock, tc.raw, 1)[0]; resp.StatusCode != tc.status {
			t.Errorf("%q: %d, want %d", tc.raw, resp.StatusCode, tc.status)
		}
	}
	// Two pipelined requests: the second, refused, is decided on its own.
	two := rawExchange(t, sock, req("/v1/messages", "", body)+req("/v1/messages", "", `{"model":"claude-opus-4","stream":true}`), 2)
	if two[0].StatusCode != 200 || two[1].StatusCode != 403 {
		t.Errorf("pipelined: %d then %d, want 200 then 403", two[0].StatusCode, two[1].StatusCode)
	}
	if n := len(r.Model.Received()); n != 2 {
		t.Errorf("the provider received %d requests, want 2", n)
	}
	// Transfer-Encoding beside a Content-Length that would end the body
	// early, with a second request after the chunked body: Go's server
	// reads the body chunked, and the request after it is one of the
	// agent's own, decided on its own. Nothing sits between the agent
	// and this one parser (the door relays bytes), so no second parser
	// can read the stream another way: there is nothing to smuggle past.
	chunk := `{"model":"` + rigtest.AllowedModel + `","stream":true,"max_tokens":8}`
	chunked := fmt.Sprintf("%x\r\n%s\r\n0\r\n\r\n", len(chunk), chunk)
	smuggle := "POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 4\r\n" +
		"Transfer-Encoding: chunked\r\n\r\n" + chunked + req("/v1/messages", "", `{"model":"claude-opus-4","stream":true}`)
	both := rawExchange(t, sock, smuggle, 2)
	if both[0].StatusCode != 200 || both[1].StatusCode != 403 {
		t.Errorf("a chunked request and the one after it: %d then %d, want 200 then 403", both[0].StatusCode, both[1].StatusCode)
	}
	if n := len(r.Model.Received()); n != 3 {
		t.Errorf("the provider received %d requests, want 3", n)
	}
}

// TestRefusedModelNameNotRecorded (red team): the model a refused
// request names is the agent's own text; recorded, it let a hijacked
// agent write 128 characters of its choosing into the session's log per
// refusal, zero-data-retention workspaces included. A refused model is
// recorded by its code alone; an allowed one by its name, which the
// registration fixes.
func TestRefusedModelNameNotRecorded(t *testing.T) {
	r, c := modelBroker(t, rigtest.ModelCapability)
	const smuggled = "the-prompt-said.secret-plan:v1/exfil"
	if status, got := post(t, c, "POST", "/v1/messages", `{"model":"`+smuggled+`","stream":true}`); status != 403 || !strings.Contains(got, "model_not_allowed") {
		t.Fatalf("a refused model: %d %q", status, got)
	}
	var refused int
	for _, ev := range r.Evidence.Events() {
		if s := fmt.Sprintf("%+v", ev); strings.Contains(s, smuggled) {
			t.Errorf("an event holds the refused model's name: %s", s)
		}
		if ev.Code == modelroute.CodeModelNotAllowed {
			refused++
		}
	}
	if refused != 1 {
		t.Errorf("%d model_not_allowed decisions recorded, want 1", refused)
	}
	if status, _ := post(t, c, "POST", "/v1/messages", allowed); status != 200 {
		t.Fatalf("an allowed model: %d", status)
	}
	if ev := modelEvents(r); ev[len(ev)-1] != "result succeeded "+rigtest.AllowedModel+" 200  in=100 out=10" {
		t.Errorf("the allowed model's result: %q", ev)
	}
}

// TestModelRouteRefusesProviderDials (red team): through the route, an
// agent with no network of its own had the provider connect to a URL
// it named (Anthropic mcp_servers, a web_fetch server tool; an OpenAI
// Responses mcp tool), carrying whatever the agent put in the request.
// Each is refused model_tool_refused before the provider sees anything.
func TestModelRouteRefusesProviderDials(t *testing.T) {
	r, c := modelBroker(t, rigtest.ModelCapability, rigtest.OpenAICapability)
	for _, tc := range []struct{ path, body string }{
		{"/v1/messages", `{"model":"` + rigtest.AllowedModel + `","stream":true,"mcp_servers":[{"type":"url","url":"https://exfil.example/mcp","name":"x"}]}`},
		{"/v1/messages", `{"model":"` + rigtest.AllowedModel + `","stream":true,"tools":[{"type":"web_fetch_20250910","name":"web_fetch"}]}`},
		{"/v1/responses", `{"model":"` + rigtest.OpenAIModel + `","stream":true,"tools":[{"type":"mcp","server_label":"x","server_url":"https://exfil.example/mcp"}]}`},
	} {
		if status, got := post(t, c, "POST", tc.path, tc.body); status != 403 || !strings.Contains(got, `"refused: model_tool_refused"`) {
			t.Errorf("%s %s: %d %q, want 403 model_tool_refused", tc.path, tc.body, status, got)
		}
	}
	if n := len(r.Model.Received()); n != 0 {
		t.Fatalf("the provider received %d requests", n)
	}
}

// TestModelRequestBudgetUnderRace (red team, held): twelve requests
// sent at once on twelve connections against a budget of three requests
// reach the provider exactly three times; the others are refused
// model_budget_exhausted. The provider holds the first ones until all
// twelve were decided, so none ends before another begins.
func TestModelRequestBudgetUnderRace(t *testing.T) {
	r := rigtest.NewModelBudget(t, modelroute.Budget{Requests: 3, Tokens: 1 << 20})
	r.Grant(rigtest.ModelCapability)
	release := make(chan struct{})
	r.Model.SetHandler(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		select {
		case <-release:
		case <-time.After(20 * time.Second):
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"type":"message","usage":{"input_tokens":1,"output_tokens":1}}`)
	}))
	sock := rigtest.ServeBroker(t, mustBroker(t, r))
	const n = 12
	statuses := postAtOnce(t, sock, n, allowed)
	var refused int
	for range n - 3 {
		if s := <-statuses; s == 403 {
			refused++
		}
	}
	close(release)
	var ok int
	for range 3 {
		if s := <-statuses; s == 200 {
			ok++
		}
	}
	if ok != 3 || refused != n-3 || len(r.Model.Received()) != 3 {
		t.Fatalf("%d allowed, %d refused, %d reached the provider; want 3, %d, 3", ok, refused, len(r.Model.Received()), n-3)
	}
}

// TestModelBudgetIsTheSessions (red team): the model budget is the
// session's (SECURITY.md, asset 12), yet it was kept per channel, and
// since each agent of a session has a channel of its own, every agent
// the host launched (or relaunched after the agent exited) started with
// a fresh budget. Two channels of one session, each behind its own
// broker, now share one budget of three requests.
func TestModelBudgetIsTheSessions(t *testing.T) {
	r := rigtest.NewModelBudget(t, modelroute.Budget{Requests: 3, Tokens: 1 << 20})
	r.Grant(rigtest.ModelCapability)
	first := modelClient(t, rigtest.ServeBroker(t, mustBroker(t, r)))
	for i := range 2 {
		if status, got := post(t, first, "POST", "/v1/messages", allowed); status != 200 {
			t.Fatalf("request %d on the first agent's channel: %d %q", i+1, status, got)
		}
	}
	second := modelClient(t, rigtest.ServeBroker(t, mustBroker(t, r)))
	if status, got := post(t, second, "POST", "/v1/messages", allowed); status != 200 {
		t.Fatalf("the session's third request, on the second agent's channel: %d %q", status, got)
	}
	for _, c := range []*http.Client{second, first} {
		if status, got := post(t, c, "POST", "/v1/messages", allowed); status != 403 || !strings.Contains(got, "model_budget_exhausted") {
			t.Errorf("the session's fourth request: %d %q, want model_budget_exhausted", status, got)
		}
	}
	if n := len(r.Model.Received()); n != 3 {
		t.Errorf("the provider received %d requests, want the session's budget of 3", n)
	}
	// Another session's channel has a budget of its own.
	other := rigtest.Member()
	other.Session = "sess-2"
	b, err := broker.New(r.Channel(other))
	if err != nil {
		t.Fatal(err)
	}
	if status, got := post(t, modelClient(t, rigtest.ServeBroker(t, b)), "POST", "/v1/messages", allowed); status != 200 {
		t.Errorf("another session's first request: %d %q", status, got)
	}
}

// TestModelAnswerHeadersAndCodingsScreened (red team, held; the checks
// had no test): a provider that puts the key in the answer's
// Content-Type (the one header the route passes on), or sends its
// stream in a content coding the edge cannot read (the key inside gzip
// bytes labelled br), gets nothing to the agent: the answer is refused
// before a byte is written.
func TestModelAnswerHeadersAndCodingsScreened(t *testing.T) {
	for name, h := range map[string]http.HandlerFunc{
		"key in the content type": func(w http.ResponseWriter, req *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream; charset=utf-8; key="+req.Header.Get("X-Api-Key"))
			io.WriteString(w, "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
		},
		"key in a content coding": func(w http.ResponseWriter, req *http.Request) {
			var z bytes.Buffer
			zw := gzip.NewWriter(&z)
			io.WriteString(zw, "event: content_block_delta\ndata: {\"text\":\""+req.Header.Get("X-Api-Key")+"\"}\n\n")
			zw.Close()
			w.Header().Set("Content-Type", "text/event-stream")
			w.Header().Set("Content-Encoding", "br")
			w.Write(z.Bytes())
		},
	} {
		r, c := modelBroker(t, rigtest.ModelCapability)
		r.Model.SetHandler(h)
		req, _ := http.NewRequest("POST", "http://door/v1/messages", strings.NewReader(allowed))
		resp, err := c.Do(req)
		var got []byte
		var header string
		if err == nil {
			got, _ = io.ReadAll(resp.Body)
			resp.Body.Close()
			header = fmt.Sprint(resp.Header)
		}
		noLeak(t, name+": the headers", []byte(header))
		noLeak(t, name+": the answer", got)
		if zr, err := gzip.NewReader(bytes.NewReader(got)); err == nil {
			plain, _ := io.ReadAll(zr)
			noLeak(t, name+": the answer, decompressed", plain)
		}
		if err == nil && resp.StatusCode == 200 {
			t.Errorf("%s: the answer was relayed (200)", name)
		}
	}
}

// TestModelTokenBudgetUnderRace (red team): requests sent at once all
// passed the token check before any had reported its usage, so each
// overran the budget by its own: 16 requests at once on a budget of
// 1000 tokens, each reporting 132,000, spent 2,112,000 tokens (measured
// before the fix). Now each request holds the most it may spend (its
// body's length plus its max_tokens) until it settles, and one that
// would begin while those in flight hold what is left waits for them:
// the session spends at most its budget plus one request's usage.
func TestModelTokenBudgetUnderRace(t *testing.T) {
	const budget, usage = 1000, 110
	r := rigtest.NewModelBudget(t, modelroute.Budget{Requests: 100, Tokens: budget})
	r.Grant(rigtest.ModelCapability)
	hold := int64(len(allowed)) + 64 // the body and its max_tokens
	admitted := int(budget/hold) + 1 // held at once before the budget is reached
	var mu sync.Mutex
	arrived, release := 0, make(chan struct{})
	r.Model.SetHandler(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		mu.Lock()
		arrived++
		if arrived == admitted {
			close(release)
		}
		mu.Unlock()
		select {
		case <-release:
		case <-time.After(20 * time.Second):
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"type":"message","usage":{"input_tokens":100,"output_tokens":10}}`)
	}))
	sock := rigtest.ServeBroker(t, mustBroker(t, r))
	const n = broker.MaxModelConnections
	statuses := postAtOnce(t, sock, n, allowed)
	answered := 0
	for range n {
		switch s := <-statuses; s {
		case 200:
			answered++
		case 403:
		default:
			t.Errorf("a request ended %d", s)
		}
	}
	var spent int64
	for _, ev := range waitResults(t, r, answered) {
		spent += ev.InputTokens + ev.OutputTokens
	}
	if spent > budget+usage || spent < budget {
		t.Fatalf("%d requests at once answered %d, spending %d tokens of a budget of %d; want at most one request's %d over it", n, answered, spent, budget, usage)
	}
}

// TestModelStreamCutBeforeAnyEventIsCharged (red team): an agent that
// hangs up once the provider has its request, before any answer, was
// charged nothing (a cut answer before message_start, which reports the
// input, only its max_tokens, 1 here), although the provider read, and
// bills, the whole prompt. A 2xx answer without its final usage, and
// a request the agent hung up on before any answer, are charged at least
// the body's length as input (a token is at least a byte of its text)
// and the output cap.
func TestModelStreamCutBeforeAnyEventIsCharged(t *testing.T) {
	r := rigtest.NewModelBudget(t, modelroute.Budget{Requests: 10, Tokens: 1000})
	r.Grant(rigtest.ModelCapability)
	answered, hungUp := make(chan struct{}), make(chan struct{})
	r.Model.SetHandler(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		close(answered) // the provider has read the request, and answers nothing yet
		select {
		case <-req.Context().Done():
			close(hungUp)
		case <-time.After(10 * time.Second):
		}
	}))
	c := modelClient(t, rigtest.ServeBroker(t, mustBroker(t, r)))
	prompt := `{"model":"` + rigtest.AllowedModel + `","stream":true,"max_tokens":1,"messages":[{"role":"user","content":"` + strings.Repeat("long prompt ", 200) + `"}]}`
	ctx, hangUp := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "POST", "http://door/v1/messages", strings.NewReader(prompt))
	done := make(chan struct{})
	go func() {
		if resp, err := c.Do(req); err == nil {
			resp.Body.Close()
		}
		close(done)
	}()
	<-answered
	hangUp()
	<-done
	select {
	case <-hungUp:
	case <-time.After(10 * time.Second):
		t.Fatal("the provider never saw the agent hang up")
	}
	res := waitResults(t, r, 1)
	if res[0].Status != 0 || res[0].InputTokens < int64(len(prompt)) || res[0].OutputTokens < 1 {
		t.Errorf("a stream cut before its first event: status %d, charged in=%d out=%d; want its body's length (%d) as input", res[0].Status, res[0].InputTokens, res[0].OutputTokens, len(prompt))
	}
	r.Model.SetHandler(nil)
	if status, got := post(t, c, "POST", "/v1/messages", allowed); status != 403 || !strings.Contains(got, "model_budget_exhausted") {
		t.Fatalf("after a cut request of %d bytes on a budget of 1000 tokens: %d %q", len(prompt), status, got)
	}
}

// postAtOnce sends n model requests with body at once, each on a
// connection of its own to the broker at sock, and returns the channel
// their statuses arrive on as they end (0 for a request that failed).
func postAtOnce(t *testing.T, sock string, n int, body string) <-chan int {
	statuses := make(chan int, n)
	for range n {
		go func() {
			c := modelClient(t, sock)
			resp, err := c.Post("http://door/v1/messages", "application/json", strings.NewReader(body))
			if err != nil {
				statuses <- 0
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			statuses <- resp.StatusCode
		}()
	}
	return statuses
}
