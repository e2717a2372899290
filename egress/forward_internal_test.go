package egress

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// A rawOrigin is a destination on 127.0.0.1 that the test scripts at the
// byte level: serve is called for every request read, with the
// connection, the request's number n (from 1, over all connections) and
// its number k on its connection (from 1). The connection is closed when
// serve returns false.
type rawOrigin struct {
	addr     string
	requests atomic.Int64 // requests read, all connections
	conns    atomic.Int64 // connections accepted
}

func startRawOrigin(t *testing.T, serve func(c net.Conn, n, k int64) bool) *rawOrigin {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	o := &rawOrigin{addr: ln.Addr().String()}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var open []net.Conn
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			o.conns.Add(1)
			mu.Lock()
			open = append(open, c)
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				br := bufio.NewReader(c)
				for k := int64(1); ; k++ {
					req, err := http.ReadRequest(br)
					if err != nil {
						c.Close()
						return
					}
					io.Copy(io.Discard, req.Body)
					if !serve(c, o.requests.Add(1), k) {
						c.Close()
						return
					}
				}
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range open {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return o
}

// proxyClient returns a client that sends its requests through proxy,
// on one keep-alive workload connection: a request of its own carries no
// "Connection: close", so the guard may pool the upstream connection.
// Each client is a new workload connection.
func proxyClient(t *testing.T, proxy string) *http.Client {
	tr := &http.Transport{Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: proxy}), MaxConnsPerHost: 1}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// getBody GETs u through c and returns the status and body.
func getBody(t *testing.T, c *http.Client, u string) (int, string) {
	t.Helper()
	resp, err := c.Get(u)
	if err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func writeResponse(w io.Writer, body string) {
	fmt.Fprintf(w, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
}

// TestGuardNeverServesAStaleResponse is issue 11's repro: a destination
// that sends two responses to one request had its second response served
// to a later request from another workload connection. Whether the extra
// response arrives with the first (buffered by the guard) or after it (in
// the socket when the connection is reused), the later request gets its
// own answer.
func TestGuardNeverServesAStaleResponse(t *testing.T) {
	for _, tc := range []struct {
		name   string
		pooled bool // whether the guard may pool the connection at all
		serve  func(c net.Conn, n, k int64) bool
	}{
		{"extra response in the same write", false, func(w net.Conn, n, _ int64) bool {
			fmt.Fprintf(w, "HTTP/1.1 200 OK\r\nContent-Length: 7\r\n\r\nreply %dHTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nstale", n)
			return true
		}},
		{"extra response after the first", true, func(w net.Conn, n, _ int64) bool {
			writeResponse(w, fmt.Sprintf("reply %d", n))
			time.Sleep(10 * time.Millisecond)
			writeResponse(w, "stale")
			return true
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := startRawOrigin(t, tc.serve)
			g, proxy := startGuard(t, GuardConfig{})
			for i := 1; i <= 3; i++ {
				time.Sleep(50 * time.Millisecond) // the extra response has arrived
				_, body := getBody(t, proxyClient(t, proxy), "http://"+o.addr+"/")
				if body != fmt.Sprintf("reply %d", i) {
					t.Fatalf("request %d got %q, want %q", i, body, fmt.Sprintf("reply %d", i))
				}
				g.pool.mu.Lock()
				n := g.pool.n
				g.pool.mu.Unlock()
				if !tc.pooled && n != 0 {
					t.Fatalf("the guard pooled a connection holding bytes past its response")
				}
			}
		})
	}
}

// TestGuardNeverReplaysAnAnsweredRequest is issue 11's repro: on a reused
// pooled connection, a round-trip error after the destination had
// answered (a 101, a garbage status line, conflicting Content-Length)
// made the guard send the GET again on a fresh connection, so the
// destination got it twice. Only a reused connection from which nothing
// at all was read may be retried.
func TestGuardNeverReplaysAnAnsweredRequest(t *testing.T) {
	for _, bad := range []string{
		"HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\nConnection: Upgrade\r\n\r\n",
		"HTTP/1.1 abc\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab",
	} {
		t.Run(strings.Fields(bad)[1], func(t *testing.T) {
			o := startRawOrigin(t, func(c net.Conn, n, k int64) bool {
				if k == 1 {
					writeResponse(c, fmt.Sprintf("reply %d", n))
					return true
				}
				io.WriteString(c, bad)
				return false
			})
			_, proxy := startGuard(t, GuardConfig{})
			if status, body := getBody(t, proxyClient(t, proxy), "http://"+o.addr+"/"); status != http.StatusOK || body != "reply 1" {
				t.Fatalf("first GET = %d %q", status, body)
			}
			time.Sleep(20 * time.Millisecond) // the upstream connection is pooled
			status, _ := getBody(t, proxyClient(t, proxy), "http://"+o.addr+"/")
			if n := o.requests.Load(); n != 2 {
				t.Fatalf("the destination received %d requests, want 2 (the answered GET was replayed); status %d", n, status)
			}
			if status != http.StatusBadGateway {
				t.Fatalf("second GET = %d, want 502", status)
			}
		})
	}
}

// TestGuardRetriesOnlyIdempotentRequests is the rule of issue 10: a reused
// pooled connection that the destination closes without answering (so
// nothing was read from it) is retried once on a fresh connection for a
// GET, and never for a POST, which the destination must not get twice.
func TestGuardRetriesOnlyIdempotentRequests(t *testing.T) {
	o := startRawOrigin(t, func(c net.Conn, n, k int64) bool {
		if k == 1 {
			writeResponse(c, fmt.Sprintf("reply %d", n))
			return true
		}
		return false // read the request, then close without a byte
	})
	_, proxy := startGuard(t, GuardConfig{})
	send := func(method string) int {
		req, _ := http.NewRequest(method, "http://"+o.addr+"/", nil)
		resp, err := proxyClient(t, proxy).Do(req)
		if err != nil {
			t.Fatalf("%s: %v", method, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		time.Sleep(20 * time.Millisecond) // the upstream connection is pooled
		return resp.StatusCode
	}
	send(http.MethodGet) // request 1; its connection is pooled
	if status := send(http.MethodGet); status != http.StatusOK || o.requests.Load() != 3 {
		t.Fatalf("GET on a closed pooled connection = %d after %d requests, want 200 after 3 (one retry)", status, o.requests.Load())
	}
	if status := send(http.MethodPost); status != http.StatusBadGateway || o.requests.Load() != 4 {
		t.Fatalf("POST on a closed pooled connection = %d after %d requests, want 502 after 4 (no retry)", status, o.requests.Load())
	}
}

// TestGuardRefusesMalformedBody is issue 11's repro: a request body the
// workload sends malformed (bad chunk framing) was answered 502 upstream_failed, as if the
// destination had failed. It is the workload's fault: 400 with the
// request_invalid refusal.
func TestGuardRefusesMalformedBody(t *testing.T) {
	o := startRawOrigin(t, func(c net.Conn, n, _ int64) bool {
		writeResponse(c, "ok")
		return true
	})
	_, proxy := startGuard(t, GuardConfig{})
	for name, raw := range map[string]string{
		"bad chunk size":       "Transfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n",
		"bad chunk terminator": "Transfer-Encoding: chunked\r\n\r\n3\r\nabcXY0\r\n\r\n",
	} {
		t.Run(name, func(t *testing.T) {
			c, err := net.Dial("tcp", proxy)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			fmt.Fprintf(c, "POST http://%s/ HTTP/1.1\r\nHost: %s\r\n%s", o.addr, o.addr, raw)
			resp, err := http.ReadResponse(bufio.NewReader(c), &http.Request{Method: http.MethodPost})
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusBadRequest || resp.Header.Get(RefusalHeader) != string(CodeRequestInvalid) || resp.Header.Get(UpstreamFailureHeader) != "" {
				t.Fatalf("malformed body = %d refusal %q upstream %q, want 400 refusal %s", resp.StatusCode,
					resp.Header.Get(RefusalHeader), resp.Header.Get(UpstreamFailureHeader), CodeRequestInvalid)
			}
		})
	}
}
