package runnertest

import (
	"bytes"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/egress"
)

// TestGetSteps: a script of Get steps alone plays without a broker (no
// socket is set), and the agent says each status it got, the guard's
// refusal code with it, or that nothing answered.
func TestGetSteps(t *testing.T) {
	ok := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	defer ok.Close()
	refusing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set(egress.RefusalHeader, "host_not_allowed")
		w.WriteHeader(http.StatusForbidden)
	}))
	defer refusing.Close()
	hostile := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set(egress.RefusalHeader, "Host Not Allowed ☺")
		w.WriteHeader(http.StatusForbidden)
	}))
	defer hostile.Close()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String() + "/"
	ln.Close()
	a := &Agent{Script: []Step{
		{Get: ok.URL + "/", Direct: true},
		{Get: refusing.URL + "/", Direct: true},
		{Get: hostile.URL + "/", Direct: true},
		{Get: closed, Direct: true},
	}}
	var out bytes.Buffer
	in := strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"s","prompt":[]}}` + "\n")
	if err := a.Serve(in, &out); err != nil {
		t.Fatal(err)
	}
	var said []string
	for line := range strings.Lines(out.String()) {
		var m struct {
			Params struct {
				Update struct {
					Content struct{ Text string }
				}
			}
		}
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatal(err)
		}
		said = append(said, m.Params.Update.Content.Text)
	}
	want := []string{
		"[scripted] GET " + ok.URL + "/ (ignoring the proxy) -> 200",
		"[scripted] GET " + refusing.URL + "/ (ignoring the proxy) -> 403 host_not_allowed",
		"[scripted] GET " + hostile.URL + "/ (ignoring the proxy) -> 403 " + checkfu.Quote("Host Not Allowed ☺"),
		"[scripted] GET " + closed + " (ignoring the proxy) -> no answer: \"", // the error, quoted
		"", // the turn's end
	}
	if len(said) != len(want) {
		t.Fatalf("the agent said %q, want %q", said, want)
	}
	for i := range want {
		if said[i] != want[i] && !(strings.HasSuffix(want[i], ": \"") && strings.HasPrefix(said[i], want[i])) {
			t.Errorf("the agent said %q, want %q", said[i], want[i])
		}
	}
	if !strings.Contains(out.String(), `"stopReason":"end_turn"`) {
		t.Errorf("the turn did not end end_turn:\n%s", out.String())
	}
}
