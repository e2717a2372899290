package egress

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// A rawOrigin is a destination on 127.0.0.1 that the test scripts at the
// byte level: serve is called for every request read, with the
// connection's writer and the request's number (from 1, over all
// connections).
type rawOrigin struct {
	addr     string
	requests atomic.Int64 // requests read, all connections
	conns    atomic.Int64 // connections accepted
}

func startRawOrigin(t *testing.T, serve func(w io.Writer, c net.Conn, n int64)) *rawOrigin {
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
				for {
					req, err := http.ReadRequest(br)
					if err != nil {
						c.Close()
						return
					}
					io.Copy(io.Discard, req.Body)
					serve(c, c, o.requests.Add(1))
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
		serve  func(w io.Writer, c net.Conn, n int64)
	}{
		{"extra response in the same write", false, func(w io.Writer, _ net.Conn, n int64) {
			fmt.Fprintf(w, "HTTP/1.1 200 OK\r\nContent-Length: 7\r\n\r\nreply %dHTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nstale", n)
		}},
		{"extra response after the first", true, func(w io.Writer, _ net.Conn, n int64) {
			writeResponse(w, fmt.Sprintf("reply %d", n))
			time.Sleep(10 * time.Millisecond)
			writeResponse(w, "stale")
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
