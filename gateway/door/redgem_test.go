package door_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/checkfu/checkfu/custody/custodytest"
	"github.com/checkfu/checkfu/gateway/broker"
	"github.com/checkfu/checkfu/gateway/internal/rigtest"
)

// TestGeminiThroughTheDoorRaw (red team, mock: the rig's model server on
// loopback, the door's model relay in process): Gemini requests written
// as raw bytes to the door's loopback port. The door relays bytes and
// never reads the path, so what the broker decides is what the agent
// wrote: an encoded colon and model reach the provider at the canonical
// path with the key once in x-goog-api-key and no agent header; a
// count_tokens path on a Gemini-only session, an encoded slash, a
// function response's file data and several candidates never reach it.
func TestGeminiThroughTheDoorRaw(t *testing.T) {
	r := rigtest.NewModel(t)
	r.Grant(rigtest.GeminiCapability)
	b, err := broker.New(r.Channel(rigtest.Member()))
	if err != nil {
		t.Fatal(err)
	}
	addr := rigtest.ServeModelRelay(t, rigtest.ServeBroker(t, b))
	m := rigtest.GeminiModel
	send := func(target, extra, body string) (int, string) {
		t.Helper()
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(30 * time.Second))
		fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\n%sContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", target, extra, len(body), body)
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("%s: %v", target, err)
		}
		got, _ := io.ReadAll(resp.Body)
		if leaks := custodytest.FindLeaks([]byte(rigtest.ModelCanary), got); len(leaks) > 0 {
			t.Fatalf("%s: the answer leaks the model key as %v", target, leaks)
		}
		return resp.StatusCode, string(got)
	}
	body := `{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"generationConfig":{"maxOutputTokens":8}}`
	keys := "x-goog-api-key: placeholder\r\nAuthorization: Bearer placeholder\r\n"
	for _, tc := range []struct {
		target, body string
		status       int
		text         string
	}{
		{"/v1beta/models/" + m + "%3AstreamGenerateContent?alt=sse", body, 200, `"finishReason":"STOP"`},
		{"/v1beta/models/" + strings.ReplaceAll(m, ".", "%2E") + ":generateContent", body, 200, "hello from the scripted model"},
		// A path no granted route serves falls to the profile's first
		// model capability (Anthropic's, not granted here).
		{"/v1/messages/count_tokens?beta=true", `{"model":"` + m + `","messages":[]}`, 403, `"refused: permission_missing"`},
		{"/v1beta/models/..%2Ffiles:generateContent", body, 403, `"refused: permission_missing"`},
		{"/v1beta/models/" + m + ":generateContent", `{"contents":[{"role":"user","parts":[{"function_response":{"name":"f","parts":[{"file_data":{"file_uri":"https://exfil.example/x"}}]}}]}]}`, 403, `"refused: model_tool_refused"`},
		{"/v1beta/models/" + m + ":generateContent", `{"generation_config":{"candidate_count":4}}`, 400, `"refused: model_request_invalid"`},
	} {
		if status, got := send(tc.target, keys, tc.body); status != tc.status || !strings.Contains(got, tc.text) {
			t.Errorf("%s %s: %d %q, want %d and %q", tc.target, tc.body, status, got, tc.status, tc.text)
		}
	}
	received := r.Model.Received()
	if len(received) != 2 {
		t.Fatalf("the model server received %d requests, want 2", len(received))
	}
	for i, want := range []string{"/v1beta/models/" + m + ":streamGenerateContent?alt=sse", "/v1beta/models/" + m + ":generateContent"} {
		req := received[i]
		if got := req.Path + map[bool]string{true: "?" + req.RawQuery}[req.RawQuery != ""]; got != want {
			t.Errorf("request %d at %s, want %s", i+1, got, want)
		}
		if vs := req.Header.Values("X-Goog-Api-Key"); len(vs) != 1 || vs[0] != rigtest.ModelCanary || req.Header.Get("Authorization") != "" {
			t.Errorf("request %d: x-goog-api-key %q, authorization %q", i+1, vs, req.Header.Get("Authorization"))
		}
	}
}
