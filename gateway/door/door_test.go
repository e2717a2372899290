package door_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/checkfu/checkfu/custody/authz"
	"github.com/checkfu/checkfu/custody/custodytest"
	"github.com/checkfu/checkfu/gateway/broker"
	"github.com/checkfu/checkfu/gateway/door"
	"github.com/checkfu/checkfu/gateway/internal/rigtest"
)

// stdio is an agent's view of a door started as a stdio MCP server: what
// the agent writes reaches the door's input, what the door writes is
// what the agent reads (and is recorded).
type stdio struct {
	toDoor   *io.PipeWriter
	fromDoor *io.PipeReader
	mu       sync.Mutex
	seen     bytes.Buffer
	done     chan error
}

func (s *stdio) Read(p []byte) (int, error) {
	n, err := s.fromDoor.Read(p)
	s.mu.Lock()
	s.seen.Write(p[:n])
	s.mu.Unlock()
	return n, err
}
func (s *stdio) Write(p []byte) (int, error) { return s.toDoor.Write(p) }
func (s *stdio) Close() error                { return s.toDoor.Close() }

// startDoor runs RelayMCP on pipes, as an agent would start the door.
// The caller ends it by closing the agent's side; a benchmark leaves that
// to the cleanup.
func startDoor(t testing.TB, socket string) *stdio {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	s := &stdio{toDoor: inW, fromDoor: outR, done: make(chan error, 1)}
	go func() {
		err := door.RelayMCP(context.Background(), inR, outW, socket)
		outW.CloseWithError(io.EOF)
		s.done <- err
	}()
	if _, bench := t.(*testing.B); bench {
		t.Cleanup(func() { inW.Close(); <-s.done })
	}
	return s
}

func text(r *mcp.CallToolResult) string {
	var parts []string
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// TestRelayMCPToBroker: an MCP client on the door's stdio lists the
// session's tools, makes an allowed call and one the gateway refuses,
// exactly as it would on the broker socket itself; no byte it reads
// holds the credential, and the door ends when the agent closes its
// input.
func TestRelayMCPToBroker(t *testing.T) {
	r := rigtest.New(t)
	r.Tools = r.Tools[:2]
	r.Grant("issues.list")
	b, err := broker.New(r.Channel(rigtest.Member()))
	if err != nil {
		t.Fatal(err)
	}
	io := startDoor(t, rigtest.ServeBroker(t, b))
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "v0"}, nil).
		Connect(ctx, &mcp.IOTransport{Reader: io, Writer: io}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(tools.Tools) != 2 {
		t.Fatalf("tools/list through the door: %d tools", len(tools.Tools))
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "list_issues", Arguments: map[string]any{"state": "open"}})
	if err != nil || res.IsError || text(res) != `{"issues":[{"n":1}]}` {
		t.Fatalf("allowed call through the door: %v %v", err, res)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "create_issue", Arguments: map[string]any{"title": "x"}})
	if err != nil || !res.IsError || text(res) != "refused: "+string(authz.CodePermissionMissing) {
		t.Fatalf("refused call through the door: %v %v", err, res)
	}
	if err := cs.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-io.done:
		if err != nil {
			t.Fatalf("RelayMCP after the agent closed its input: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("RelayMCP did not end when the agent closed its input")
	}
	io.mu.Lock()
	defer io.mu.Unlock()
	if leaks := custodytest.FindLeaks([]byte(rigtest.Canary), io.seen.Bytes()); len(leaks) > 0 {
		t.Fatalf("the door passed on the credential as %v", leaks)
	}
}

// lineServer listens on a Unix socket and records what each connection
// sent until it ends; with a reply, it writes the reply and closes the
// connection instead.
type lineServer struct {
	path string
	mu   sync.Mutex
	got  []byte
}

func startLineServer(t *testing.T, reply []byte) *lineServer {
	t.Helper()
	s := &lineServer{path: filepath.Join(t.TempDir(), "s.sock")}
	ln, err := net.Listen("unix", s.path)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				defer c.Close()
				if reply != nil {
					c.Write(reply)
					return
				}
				b, _ := io.ReadAll(c)
				s.mu.Lock()
				s.got = append(s.got, b...)
				s.mu.Unlock()
			})
		}
	})
	return s
}

func (s *lineServer) received() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return bytes.Clone(s.got)
}

// TestRelayMCPLineBound: a line of exactly MaxLineBytes passes in each
// direction; one byte more ends the relay with CodeRelayLineTooLong and
// nothing of that line is forwarded.
func TestRelayMCPLineBound(t *testing.T) {
	line := func(n int, c byte) []byte {
		b := bytes.Repeat([]byte{c}, n)
		b[n-1] = '\n'
		return b
	}
	t.Run("agent to broker", func(t *testing.T) {
		for _, tc := range []struct {
			n       int
			refused bool
		}{{door.MaxLineBytes, false}, {door.MaxLineBytes + 1, true}} {
			srv := startLineServer(t, nil)
			in := io.MultiReader(bytes.NewReader([]byte("{\"a\":1}\n")), bytes.NewReader(line(tc.n, 'x')))
			err := door.RelayMCP(context.Background(), in, io.Discard, srv.path)
			if got := errors.Is(err, door.CodeRelayLineTooLong); got != tc.refused {
				t.Fatalf("a %d-byte line: err %v", tc.n, err)
			}
			want := 8 + tc.n
			if tc.refused {
				want = 8
			}
			waitLen(t, srv, want)
		}
	})
	t.Run("broker to agent", func(t *testing.T) {
		for _, tc := range []struct {
			n       int
			refused bool
		}{{door.MaxLineBytes, false}, {door.MaxLineBytes + 1, true}} {
			srv := startLineServer(t, append([]byte("{\"a\":1}\n"), line(tc.n, 'y')...))
			var out bytes.Buffer
			inR, inW := io.Pipe()
			defer inW.Close()
			err := door.RelayMCP(context.Background(), inR, &out, srv.path)
			if got := errors.Is(err, door.CodeRelayLineTooLong); got != tc.refused {
				t.Fatalf("a %d-byte line: err %v", tc.n, err)
			}
			want := 8 + tc.n
			if tc.refused {
				want = 8
			}
			if out.Len() != want {
				t.Fatalf("a %d-byte line: the agent read %d bytes, want %d", tc.n, out.Len(), want)
			}
		}
	})
	t.Run("partial last line", func(t *testing.T) {
		srv := startLineServer(t, nil)
		if err := door.RelayMCP(context.Background(), strings.NewReader("{\"a\":1}\n{\"b\""), io.Discard, srv.path); err != nil {
			t.Fatal(err)
		}
		waitLen(t, srv, 8)
	})
}

func waitLen(t *testing.T, srv *lineServer, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for len(srv.received()) != n {
		if time.Now().After(deadline) {
			t.Fatalf("the broker side received %d bytes, want %d", len(srv.received()), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestRelayMCPNoSocket: a door whose socket is not there refuses with
// CodeBrokerUnreachable.
func TestRelayMCPNoSocket(t *testing.T) {
	err := door.RelayMCP(context.Background(), strings.NewReader(""), io.Discard, filepath.Join(t.TempDir(), "none.sock"))
	if !errors.Is(err, door.CodeBrokerUnreachable) {
		t.Fatalf("err = %v", err)
	}
}

// httpOnSocket serves h over HTTP on a Unix socket.
func httpOnSocket(t *testing.T, h http.Handler) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "m.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return path
}

// TestServeModelRelays: an HTTP request to the door's loopback port
// reaches the plane's socket byte for byte, headers included (the door
// reads and changes nothing), and a streamed answer arrives as it is
// written.
func TestServeModelRelays(t *testing.T) {
	next := make(chan struct{})
	socket := httpOnSocket(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: %s %s %s %s\n\n", r.Method, r.URL.Path, r.Header.Get("X-Api-Key"), body)
		w.(http.Flusher).Flush()
		<-next
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	addr := rigtest.ServeModelRelay(t, socket)
	req, _ := http.NewRequest("POST", "http://"+addr+"/v1/messages", strings.NewReader(`{"model":"m"}`))
	req.Header.Set("X-Api-Key", "placeholder")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	first, err := br.ReadString('\n')
	if err != nil || first != "data: POST /v1/messages placeholder {\"model\":\"m\"}\n" {
		t.Fatalf("first event %q, %v", first, err)
	}
	close(next) // the second event is written only after the first was read
	rest, _ := io.ReadAll(br)
	if string(rest) != "\ndata: [DONE]\n\n" {
		t.Fatalf("rest %q", rest)
	}
}

// TestServeModelConnBound: the relay holds at most MaxModelConns
// connections; one more is closed at once, and a freed slot is reused.
func TestServeModelConnBound(t *testing.T) {
	srv := startLineServer(t, nil)
	addr := rigtest.ServeModelRelay(t, srv.path)
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for i := 0; i < door.MaxModelConns; i++ {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Write([]byte("x")); err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	extra, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer extra.Close()
	extra.SetReadDeadline(time.Now().Add(10 * time.Second))
	if n, err := extra.Read(make([]byte, 1)); n != 0 || !errors.Is(err, io.EOF) {
		t.Fatalf("connection %d past the bound: read %d, %v; want it closed", door.MaxModelConns+1, n, err)
	}
	conns[0].Close()
	conns = conns[1:]
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		c.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
		_, err = c.Read(make([]byte, 1))
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() { // held open: the slot was reused
			conns = append(conns, c)
			break
		}
		c.Close()
		if time.Now().After(deadline) {
			t.Fatal("a freed slot was never reused")
		}
	}
}

// TestListenModelLoopbackOnly: the model relay listens on loopback only.
func TestListenModelLoopbackOnly(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", "198.18.0.1:0", "[::]:0", "localhost:0", "127.0.0.1", ""} {
		if ln, err := door.ListenModel(addr); !errors.Is(err, door.CodeRelayArgumentsInvalid) {
			if ln != nil {
				ln.Close()
			}
			t.Errorf("ListenModel(%q) = %v", addr, err)
		}
	}
	for _, addr := range []string{"127.0.0.1:0", "[::1]:0"} {
		ln, err := door.ListenModel(addr)
		if err != nil {
			if addr == "[::1]:0" { // a host without IPv6 loopback
				continue
			}
			t.Fatalf("ListenModel(%q): %v", addr, err)
		}
		ln.Close()
	}
}

// TestRunStartsTheAgent: Run starts the model relay before the agent,
// tells the agent its URL, and returns the agent's exit code; without a
// command it refuses.
func TestRunStartsTheAgent(t *testing.T) {
	socket := filepath.Join(t.TempDir(), "none.sock")
	code, err := door.Run(context.Background(), door.RunConfig{Socket: socket, ModelAddr: "127.0.0.1:0",
		Command: []string{"sh", "-c", `case "$` + door.ModelURLEnv + `" in http://127.0.0.1:*) exit 7;; esac; exit 1`}})
	if err != nil || code != 7 {
		t.Fatalf("Run = %d, %v; want the agent's 7", code, err)
	}
	if _, err := door.Run(context.Background(), door.RunConfig{Socket: socket}); !errors.Is(err, door.CodeRelayArgumentsInvalid) {
		t.Fatalf("Run without a command: %v", err)
	}
	if _, err := door.Run(context.Background(), door.RunConfig{Socket: socket, ModelAddr: "0.0.0.0:0", Command: []string{"true"}}); !errors.Is(err, door.CodeRelayArgumentsInvalid) {
		t.Fatalf("Run with a model relay beyond loopback: %v", err)
	}
}
