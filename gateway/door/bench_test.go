package door_test

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/checkfu/checkfu/gateway/broker"
	"github.com/checkfu/checkfu/gateway/internal/rigtest"
	"github.com/checkfu/checkfu/gateway/modelroute"
)

// benchBroker serves a broker whose channel allows list_issues.
func benchBroker(b *testing.B) string {
	r := rigtest.New(b)
	r.Tools = r.Tools[:1]
	r.Grant("issues.list")
	br, err := broker.New(r.Channel(rigtest.Member()))
	if err != nil {
		b.Fatal(err)
	}
	return rigtest.ServeBroker(b, br)
}

func callLoop(b *testing.B, cs *mcp.ClientSession) {
	ctx := context.Background()
	b.ResetTimer()
	for b.Loop() {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "list_issues", Arguments: map[string]any{"state": "open"}})
		if err != nil || res.IsError {
			b.Fatal(err, res)
		}
	}
}

// BenchmarkToolCall: one allowed tool call (the whole gateway path to a
// loopback provider) from an MCP client on the broker socket directly,
// and through the door's stdio relay; same broker, same run.
func BenchmarkToolCall(b *testing.B) {
	b.Run("socket", func(b *testing.B) {
		conn, err := net.Dial("unix", benchBroker(b))
		if err != nil {
			b.Fatal(err)
		}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "v0"}, nil).
			Connect(context.Background(), &mcp.IOTransport{Reader: conn, Writer: conn}, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer cs.Close()
		callLoop(b, cs)
	})
	b.Run("door", func(b *testing.B) {
		s := startDoor(b, benchBroker(b))
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "v0"}, nil).
			Connect(context.Background(), &mcp.IOTransport{Reader: s, Writer: s}, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer cs.Close()
		callLoop(b, cs)
	})
}

// BenchmarkFirstToken: the time from sending a streamed model request to
// reading its first event, directly on the loopback server and through
// the door's model relay to the same server behind a Unix socket (the
// plane's side of the socket is a plain HTTP server here: this measures
// the door, not the model route's checks).
func BenchmarkFirstToken(b *testing.B) {
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "event: message_start\ndata: {\"type\":\"message_start\"}\n\n")
		w.(http.Flusher).Flush()
		io.WriteString(w, "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
	})
	run := func(b *testing.B, url string) {
		client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
		b.ResetTimer()
		for b.Loop() {
			resp, err := client.Post(url+"/v1/messages", "application/json", strings.NewReader(`{"model":"m","stream":true}`))
			if err != nil {
				b.Fatal(err)
			}
			line, err := bufio.NewReader(resp.Body).ReadString('\n')
			if err != nil || !strings.HasPrefix(line, "event: message_start") {
				b.Fatal(line, err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}
	b.Run("direct", func(b *testing.B) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		srv := &http.Server{Handler: handler}
		go srv.Serve(ln)
		defer srv.Close()
		run(b, "http://"+ln.Addr().String())
	})
	b.Run("door", func(b *testing.B) {
		path := b.TempDir() + "/m.sock"
		ln, err := net.Listen("unix", path)
		if err != nil {
			b.Fatal(err)
		}
		srv := &http.Server{Handler: handler}
		go srv.Serve(ln)
		defer srv.Close()
		run(b, "http://"+rigtest.ServeModelRelay(b, path))
	})
}

// BenchmarkLongStream: a 16 MiB streamed answer read whole, directly and
// through the door's model relay (MB/s is the figure to compare).
func BenchmarkLongStream(b *testing.B) {
	const size = 16 << 20
	chunk := []byte("data: " + strings.Repeat("x", 32<<10-8) + "\n\n")
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		for n := 0; n < size; n += len(chunk) {
			w.Write(chunk)
		}
	})
	run := func(b *testing.B, url string) {
		client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
		b.SetBytes(size)
		b.ResetTimer()
		for b.Loop() {
			resp, err := client.Post(url+"/v1/messages", "application/json", strings.NewReader(`{"model":"m","stream":true}`))
			if err != nil {
				b.Fatal(err)
			}
			if n, err := io.Copy(io.Discard, resp.Body); err != nil || n < size {
				b.Fatal(n, err)
			}
			resp.Body.Close()
		}
	}
	b.Run("direct", func(b *testing.B) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		srv := &http.Server{Handler: handler}
		go srv.Serve(ln)
		defer srv.Close()
		run(b, "http://"+ln.Addr().String())
	})
	b.Run("door", func(b *testing.B) {
		path := b.TempDir() + "/m.sock"
		ln, err := net.Listen("unix", path)
		if err != nil {
			b.Fatal(err)
		}
		srv := &http.Server{Handler: handler}
		go srv.Serve(ln)
		defer srv.Close()
		run(b, "http://"+rigtest.ServeModelRelay(b, path))
	})
}

// routeBench serves the whole model route for a benchmark: a model rig
// with a budget no benchmark spends, its broker on a socket, and the
// door's model relay to it; it returns the rig and the relay's URL.
func routeBench(b *testing.B) (*rigtest.Rig, string) {
	r := rigtest.NewModelBudget(b, modelroute.Budget{Requests: 1 << 40, Tokens: 1 << 60})
	r.Grant(rigtest.ModelCapability)
	br, err := broker.New(r.Channel(rigtest.Member()))
	if err != nil {
		b.Fatal(err)
	}
	return r, "http://" + rigtest.ServeModelRelay(b, rigtest.ServeBroker(b, br))
}

// routeRequest is the streamed Messages request of the route benchmarks.
const routeRequest = `{"model":"` + rigtest.AllowedModel + `","stream":true,"max_tokens":64,"messages":[{"role":"user","content":"hi"}]}`

// firstToken sends one streamed request and reads up to its first text
// delta, then drains the answer.
func firstToken(b *testing.B, c *http.Client, url string) {
	resp, err := c.Post(url+"/v1/messages", "application/json", strings.NewReader(routeRequest))
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			b.Fatal(line, err)
		}
		if strings.HasPrefix(line, "event: content_block_delta") {
			break
		}
	}
	io.Copy(io.Discard, br)
}

// BenchmarkModelRouteFirstToken: from a streamed Messages request to its
// first text delta, on the scripted model server (a mock, TLS on
// loopback) directly, and through the whole model route: the door's
// relay, the broker, the pipeline's checks, the edge (key attached, TLS)
// and the echo screen of each event.
func BenchmarkModelRouteFirstToken(b *testing.B) {
	r, url := routeBench(b)
	b.Run("direct", func(b *testing.B) {
		for b.Loop() {
			firstToken(b, r.Model.DirectClient, r.Model.Direct)
		}
	})
	b.Run("route", func(b *testing.B) {
		c := &http.Client{}
		for b.Loop() {
			firstToken(b, c, url)
		}
	})
}

// serveHops serves the model route's topology with none of the plane's
// model work in it, as the baseline for what that work costs: the
// door's own byte relay from loopback TCP to a Unix socket, where a
// plain relay (in the plane's place, hopsPlane) sends the request over
// TLS to the model server and copies the answer back, flushing every
// read as the route does. It returns the door's URL.
func serveHops(b *testing.B, model string, tls *http.Client) string {
	return "http://" + rigtest.ServeModelRelay(b, hopsPlane(b, model, tls))
}

// hopsPlane serves serveHops' plain relay on a Unix socket and returns
// the socket's path.
func hopsPlane(b *testing.B, model string, tls *http.Client) string {
	sock := b.TempDir() + "/hops.sock"
	ln, err := net.Listen("unix", sock)
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req, err := http.NewRequestWithContext(r.Context(), r.Method, model+r.URL.Path, r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		req.Header.Set("Content-Type", r.Header.Get("Content-Type"))
		resp, err := tls.Do(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		w.Header().Set("Content-Type", resp.Header.Get("Content-Type"))
		w.WriteHeader(resp.StatusCode)
		buf := make([]byte, modelroute.MaxBatchBytes)
		for {
			n, err := resp.Body.Read(buf)
			if n > 0 {
				if _, werr := w.Write(buf[:n]); werr != nil {
					return
				}
				w.(http.Flusher).Flush()
			}
			if err != nil {
				return
			}
		}
	})}
	go srv.Serve(ln)
	b.Cleanup(func() { srv.Close() })
	return sock
}

// BenchmarkModelRouteLongStream: a streamed answer of 100 000 text
// deltas (about 19 MB) read whole, directly, through the route's hops
// with none of the plane's model work in them (serveHops), and through
// the whole model route, which screens every event for the key (MB/s is the
// figure). route/hops is what the route's own work costs; hops/direct
// is what the topology costs.
func BenchmarkModelRouteLongStream(b *testing.B) {
	r, routeURL := routeBench(b)
	r.Model.SetDeltas(100_000)
	b.Run("direct", func(b *testing.B) {
		for b.Loop() {
			readStream(b, r.Model.DirectClient, r.Model.Direct)
		}
	})
	b.Run("hops", func(b *testing.B) {
		hops := serveHops(b, r.Model.Direct, r.Model.DirectClient)
		c := &http.Client{}
		for b.Loop() {
			readStream(b, c, hops)
		}
	})
	b.Run("route", func(b *testing.B) {
		c := &http.Client{}
		for b.Loop() {
			readStream(b, c, routeURL)
		}
	})
}

// readStream sends the route benchmarks' streamed request to a URL and
// reads the answer whole; the bytes read are the benchmark's.
func readStream(b *testing.B, c *http.Client, to string) {
	resp, err := c.Post(to+"/v1/messages", "application/json", strings.NewReader(routeRequest))
	if err != nil {
		b.Fatal(err)
	}
	n, err := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 {
		b.Fatal(resp.StatusCode, n, err)
	}
	b.SetBytes(n)
}
