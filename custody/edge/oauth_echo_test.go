package edge_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/checkfu/checkfu/custody"
	"github.com/checkfu/checkfu/custody/edge"
	"github.com/checkfu/checkfu/egress"
)

// A token endpoint whose malformed answer quotes the request (here the
// form body, as a header line without a colon) makes the transport fail
// with an error that quotes it. The refresher's error travels up through
// TokenRuntime.Open to the edge's caller, so it must not hold the
// refresh token, raw or form-encoded.
func TestOAuthRefresherErrorWithholdsEchoedToken(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		conn, bw, err := w.(http.Hijacker).Hijack()
		if err != nil {
			panic(err)
		}
		fmt.Fprintf(bw, "HTTP/1.1 200 OK\r\n%s\r\n\r\n", body)
		bw.Flush()
		conn.Close()
	}))
	t.Cleanup(srv.Close)
	port := srv.Listener.Addr().(*net.TCPAddr).AddrPort().Port()
	client := tokenEndpointClient(t, srv)
	refresher := &edge.OAuthRefresher{Client: client, TokenURL: "https://auth.example.com:" + strconv.Itoa(int(port)) + "/oauth/token"}
	const token = "rt-CANARY/refresh+token"
	rt := custody.NewSecret([]byte(token))
	defer rt.Destroy()
	access, rotated, _, err := refresher.Refresh(context.Background(), govCred, rt)
	if access != nil || rotated != nil || err == nil {
		t.Fatalf("Refresh = %v, %v, %v; want a failure", access, rotated, err)
	}
	if _, ok := egress.UpstreamCodeOf(err); !ok {
		t.Fatalf("err = %v, want an *egress.UpstreamError", err)
	}
	if msg := err.Error(); strings.Contains(msg, "CANARY") {
		t.Fatalf("the refresh error quotes the refresh token: %q", msg)
	}
}
