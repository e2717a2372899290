package broker_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/checkfu/checkfu/custody/edge"
	"github.com/checkfu/checkfu/gateway/internal/rigtest"
)

// TestModelRouteScreensAKeySplitAcrossEvents: a provider streaming the
// model key in two text deltas, the second sent only once the agent has
// read the event before the first: the stream is cut before the delta
// that completes the key, the agent reads neither part (the first is
// held back: it ends the text with a prefix of the key of at least
// edge.MinHeldPrefix bytes), and the call's result is
// credential_echoed.
func TestModelRouteScreensAKeySplitAcrossEvents(t *testing.T) {
	r, c := modelBroker(t, rigtest.ModelCapability)
	key := rigtest.ModelCanary
	first, second := key[:len(key)/2], key[len(key)/2:]
	delta := func(text string) string {
		q, _ := json.Marshal(text)
		return fmt.Sprintf("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":%s}}\n\n", q)
	}
	next := make(chan struct{})
	r.Model.SetHandler(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":100,\"output_tokens\":1}}}\n\n")
		io.WriteString(w, delta("the key is ")+delta(req.Header.Get("X-Api-Key")[:len(first)]))
		w.(http.Flusher).Flush()
		select {
		case <-next:
		case <-time.After(10 * time.Second):
		}
		io.WriteString(w, delta(req.Header.Get("X-Api-Key")[len(first):]+", that is all")+"event: message_delta\ndata: {\"type\":\"message_delta\",\"usage\":{\"output_tokens\":10}}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
	}))
	req, _ := http.NewRequest("POST", "http://door/v1/messages", strings.NewReader(allowed))
	req.Header.Set("X-Api-Key", placeholder)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	var got []byte
	for !bytes.Contains(got, []byte("the key is ")) {
		line, err := br.ReadBytes('\n')
		got = append(got, line...)
		if err != nil {
			close(next)
			t.Fatalf("the event before the key never arrived: %v, read %q", err, got)
		}
	}
	close(next)
	rest, _ := io.ReadAll(br)
	got = append(got, rest...)
	noLeak(t, "the answer", got)
	if bytes.Contains(got, []byte(second)) || bytes.Contains(got, []byte("message_stop")) {
		t.Fatalf("the stream was not cut before the key's second part: %q", got)
	}
	if bytes.Contains(got, []byte(first[:edge.MinHeldPrefix])) {
		t.Fatalf("the key's first part was not held back: %q", got)
	}
	// The usage is what the provider reported up to the end of the cut
	// batch (its final count when the rest came in one read), else the
	// request's output cap.
	ev := modelEvents(r)
	result := "result failed " + rigtest.AllowedModel + " 200 credential_echoed in=100 "
	if len(ev) != 2 || ev[0] != "decision approved "+rigtest.AllowedModel+" " || !slices.Contains([]string{result + "out=10", result + "out=64"}, ev[1]) {
		t.Errorf("events: %q, want the decision and %q with out=10 or 64", ev, result)
	}
}
