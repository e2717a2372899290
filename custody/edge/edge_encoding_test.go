package edge_test

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/custody/edge"
	"github.com/checkfu/checkfu/egress"
)

// writeEncoded writes body under the content coding named by coding, a
// comma-separated list applied in order, as a provider that compresses
// its answers would.
func writeEncoded(w http.ResponseWriter, coding, body string) {
	b := []byte(body)
	for _, c := range strings.Split(strings.TrimPrefix(coding, "lines:"), ",") {
		var buf bytes.Buffer
		var zw io.WriteCloser
		switch c {
		case "gzip":
			zw = gzip.NewWriter(&buf)
		case "deflate":
			zw, _ = flate.NewWriter(&buf, flate.HuffmanOnly)
		default:
			continue
		}
		zw.Write(b)
		zw.Close()
		b = buf.Bytes()
	}
	switch {
	case strings.HasPrefix(coding, "lines:"):
		// One header line per coding.
		w.Header()["Content-Encoding"] = strings.Split(strings.TrimPrefix(coding, "lines:"), ",")
	case coding != "":
		w.Header().Set("Content-Encoding", strings.ReplaceAll(coding, ",", ", "))
	}
	w.Write(b)
}

// decodeAll undoes writeEncoded's codings, as a caller handed the body
// and its Content-Encoding header would.
func decodeAll(t *testing.T, coding string, body []byte) []byte {
	cs := strings.Split(coding, ", ")
	for i := len(cs) - 1; i >= 0; i-- {
		var r io.Reader
		switch cs[i] {
		case "gzip":
			zr, err := gzip.NewReader(bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			r = zr
		case "deflate":
			r = flate.NewReader(bytes.NewReader(body))
		default:
			continue
		}
		var err error
		if body, err = io.ReadAll(r); err != nil {
			t.Fatal(err)
		}
	}
	return body
}

// A provider that echoes the credential in a compressed body: the edge
// cannot look inside a content coding, so such a response is withheld,
// never passed on for the caller to decompress. The edge asks for
// identity: were the transport to ask for gzip, it would decode one layer
// and delete every Content-Encoding line, so "gzip" sent on two lines over
// a twice-gzipped body would arrive looking plain, still gzipped once.
//
// Mutants: deleting the Content-Encoding check in Edge.send makes every
// encoded case return a body that inflates to the credential; not asking
// for identity makes the two-line case do so.
func TestEdgeWithholdsEncodedEcho(t *testing.T) {
	rig := newEdgeRig(t)
	for _, tc := range []struct {
		coding string
		code   checkfu.Code
	}{
		{"gzip", edge.CodeResponseEncoded},
		{"deflate", edge.CodeResponseEncoded},
		{"gzip,gzip", edge.CodeResponseEncoded},
		{"x-custom", edge.CodeCredentialEchoed}, // not encoded at all: the echo is in plain sight
		{"identity", edge.CodeCredentialEchoed},
		{"lines:gzip,gzip", edge.CodeResponseEncoded},
	} {
		t.Run(tc.coding, func(t *testing.T) {
			resp, err := rig.call(context.Background(), rig.invocation("echo.encoded", "echo_encoded", "GET", "/v1/echo-encoded", `{"coding":"`+tc.coding+`"}`))
			if resp != nil {
				body := decodeAll(t, resp.Header.Get("Content-Encoding"), resp.Body)
				t.Errorf("coding %s: response returned (Content-Encoding %q); it decodes to %d bytes, holding the credential: %v",
					tc.coding, resp.Header.Get("Content-Encoding"), len(body), bytes.Contains(body, []byte(edgeCanary)))
				return
			}
			wantCode(t, err, tc.code)
			noLeak(t, err, nil)
		})
	}
}

// A provider whose malformed answer quotes the credential (here as a
// header line without a colon) makes the transport fail with an error
// whose text quotes the broken line. That error reaches the caller, so
// the edge looks for the credential in it as in a response, and withholds
// the text: the failure stays an upstream failure with its code and
// target.
func TestEdgeUpstreamErrorEchoWithheld(t *testing.T) {
	rig := newEdgeRig(t)
	resp, err := rig.call(context.Background(), rig.invocation("echo.malformed", "echo_malformed", "GET", "/v1/echo-malformed", `{}`))
	if resp != nil || err == nil {
		t.Fatalf("malformed answer = %v, %v; want an upstream failure", resp, err)
	}
	if _, ok := egress.UpstreamCodeOf(err); !ok {
		t.Fatalf("err = %v, want an *egress.UpstreamError", err)
	}
	noLeak(t, err, nil)
	noLeak(t, nil, rig.evidence.Events())
}
