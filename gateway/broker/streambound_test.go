package broker_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/checkfu/checkfu/gateway/internal/rigtest"
	"github.com/checkfu/checkfu/gateway/modelroute"
)

// TestModelRouteStreamBound: a provider streaming past
// modelroute.MaxStreamBytes (here a mock that would never stop) has its
// stream cut before the event that passes the bound; the agent reads no
// more than the bound and never the stream's end, and the call's result
// event records the cut with model_stream_too_large.
func TestModelRouteStreamBound(t *testing.T) {
	r, c := modelBroker(t, rigtest.ModelCapability)
	delta := "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"" + strings.Repeat("x", 900) + "\"}}\n\n"
	r.Model.SetHandler(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		if _, err := w.Write([]byte("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":100,\"output_tokens\":1}}}\n\n")); err != nil {
			return
		}
		chunk := []byte(strings.Repeat(delta, 64))
		for sent := 0; sent <= 2*modelroute.MaxStreamBytes; sent += len(chunk) {
			if _, err := w.Write(chunk); err != nil {
				return // the route hung up
			}
		}
		w.Write([]byte("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"))
	}))
	status, body := post(t, c, "POST", "/v1/messages", allowed)
	if status != 200 || len(body) > modelroute.MaxStreamBytes || len(body) < modelroute.MaxStreamBytes-2*len(delta) || strings.Contains(body, "message_stop") {
		t.Fatalf("a stream past the bound: %d, the agent read %d bytes (bound %d), its end: %v", status, len(body), modelroute.MaxStreamBytes, strings.Contains(body, "message_stop"))
	}
	// Cut before its final usage: charged the request's output cap (64),
	// and at least its body's length in input tokens.
	want := []string{"decision approved " + rigtest.AllowedModel + " ", fmt.Sprintf("result failed %s 200 model_stream_too_large in=%d out=64", rigtest.AllowedModel, len(allowed))}
	if ev := modelEvents(r); !slices.Equal(ev, want) {
		t.Errorf("events:\n got %q\nwant %q", ev, want)
	}
}
