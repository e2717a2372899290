package wire

import (
	"bufio"
	"context"
	"io"
	"net"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/checkfu/checkfu/acp/wire/internal/frame"
)

// The throughput benchmarks move benchBytes through a real process
// (head/cat) each iteration, once over the wire (Server and Runner over
// loopback TCP) and once over a raw loopback TCP connection with the same
// process at the far end: the ratio of the two is the wire's cost.
const benchBytes = 32 << 20

func loopbackPair(b *testing.B) (net.Conn, net.Conn) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	acc := make(chan net.Conn, 1)
	go func() { c, _ := ln.Accept(); acc <- c }()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	return c, <-acc
}

func BenchmarkStdoutRawTCP(b *testing.B) {
	b.SetBytes(benchBytes)
	for b.Loop() {
		rawStdout(b)
	}
}

func rawStdout(b *testing.B) {
	{
		a, z := loopbackPair(b)
		cmd := exec.Command("head", "-c", strconv.Itoa(benchBytes), "/dev/zero")
		out, _ := cmd.StdoutPipe()
		cmd.Start()
		go func() { io.Copy(a, out); a.Close() }()
		if n, _ := io.Copy(io.Discard, z); n != benchBytes {
			b.Fatalf("raw read %d bytes", n)
		}
		cmd.Wait()
		z.Close()
	}
}

func BenchmarkStdoutWire(b *testing.B) {
	srv := &Server{Command: command("head", "-c", strconv.Itoa(benchBytes), "/dev/zero")}
	addr := benchServe(b, srv)
	b.SetBytes(benchBytes)
	for b.Loop() {
		wireStdout(b, addr)
	}
}

func wireStdout(b *testing.B, addr string) { wireStdoutWith(b, addr, nil) }

func wireStdoutWith(b *testing.B, addr string, keys *Keys) {
	{
		var n countWriter
		r := &Runner{Keys: keys, InsecureNoAuth: keys == nil, Dial: dialer(addr), Stdout: &n}
		if _, err := r.Run(context.Background()); err != nil || n != benchBytes {
			b.Fatalf("Run: %v, %d bytes", err, n)
		}
	}
}

func BenchmarkStdinRawTCP(b *testing.B) {
	b.SetBytes(benchBytes)
	for b.Loop() {
		rawStdin(b)
	}
}

func rawStdin(b *testing.B) {
	{
		a, z := loopbackPair(b)
		cmd := exec.Command("cat")
		cmd.Stdout = io.Discard
		in, _ := cmd.StdinPipe()
		cmd.Start()
		go func() { io.Copy(a, io.LimitReader(zeros{}, benchBytes)); a.Close() }()
		io.Copy(in, z)
		in.Close()
		cmd.Wait()
		z.Close()
	}
}

func BenchmarkStdinWire(b *testing.B) {
	srv := &Server{Command: command("sh", "-c", "cat >/dev/null")}
	addr := benchServe(b, srv)
	b.SetBytes(benchBytes)
	for b.Loop() {
		wireStdin(b, addr)
	}
}

// BenchmarkRatio interleaves raw and wire runs in every iteration, so a
// shared, noisy machine slows both alike; it reports each rate and the
// wire/raw ratio for stdout and stdin.
func BenchmarkRatio(b *testing.B) { benchRatio(b, nil, nil) }

// BenchmarkRatioTLS is BenchmarkRatio with both sides authenticated: TLS
// 1.3 with pinned Ed25519 keys, against the same raw (plain) TCP.
func BenchmarkRatioTLS(b *testing.B) { benchRatio(b, providerKeys, runnerKeys) }

// benchRatio runs BenchmarkRatio's interleaved loop; nil keys speak the
// wire without authentication.
func benchRatio(b *testing.B, serverKeys, clientKeys *Keys) {
	outAddr := benchServe(b, &Server{Command: command("head", "-c", strconv.Itoa(benchBytes), "/dev/zero"), Keys: serverKeys})
	inAddr := benchServe(b, &Server{Command: command("sh", "-c", "cat >/dev/null"), Keys: serverKeys})
	var rawOut, wireOut, rawIn, wireIn time.Duration
	timed := func(d *time.Duration, f func()) {
		start := time.Now()
		f()
		*d += time.Since(start)
	}
	for b.Loop() {
		timed(&rawOut, func() { rawStdout(b) })
		timed(&wireOut, func() { wireStdoutWith(b, outAddr, clientKeys) })
		timed(&rawIn, func() { rawStdin(b) })
		timed(&wireIn, func() { wireStdinWith(b, inAddr, clientKeys) })
	}
	rate := func(d time.Duration) float64 { return float64(benchBytes) * float64(b.N) / d.Seconds() / 1e6 }
	b.ReportMetric(rate(rawOut), "raw-out-MB/s")
	b.ReportMetric(rate(wireOut), "wire-out-MB/s")
	b.ReportMetric(rawOut.Seconds()/wireOut.Seconds(), "out-ratio")
	b.ReportMetric(rate(rawIn), "raw-in-MB/s")
	b.ReportMetric(rate(wireIn), "wire-in-MB/s")
	b.ReportMetric(rawIn.Seconds()/wireIn.Seconds(), "in-ratio")
	b.ReportMetric(0, "ns/op")
}

func wireStdin(b *testing.B, addr string) { wireStdinWith(b, addr, nil) }

func wireStdinWith(b *testing.B, addr string, keys *Keys) {
	{
		r := &Runner{Keys: keys, InsecureNoAuth: keys == nil, Dial: dialer(addr), Stdin: io.LimitReader(zeros{}, benchBytes)}
		if _, err := r.Run(context.Background()); err != nil {
			b.Fatalf("Run: %v", err)
		}
	}
}

// BenchmarkResume8MiB measures a resume after a drop with an 8 MiB
// journal: reconnect, resume from cursor 0, and receive the first stdout
// byte (ns/op is the time to first byte); replay-MB/s is the rate of
// replaying the whole journal.
func BenchmarkResume8MiB(b *testing.B) {
	const journal = 8 << 20
	srv := &Server{
		Command:      command("sh", "-c", "head -c "+strconv.Itoa(journal)+" /dev/zero; exec cat >/dev/null"),
		OutputWindow: 16 << 20,
	}
	addr := benchServe(b, srv)
	id := frame.ProcessID{7}
	// Open, and read (without acknowledging) until the journal holds 8 MiB.
	c, dec := rawHello(b, addr, &frame.Frame{Type: frame.TypeOpen, ID: id, Version: frame.ProtocolVersion})
	readStdout(b, dec, journal)
	c.Close()
	var replay time.Duration
	for b.Loop() {
		c, dec := rawHello(b, addr, &frame.Frame{Type: frame.TypeResume, ID: id, Offset: 0})
		start := time.Now()
		first := readStdout(b, dec, 1)
		b.StopTimer()
		readStdout(b, dec, journal-first)
		replay += time.Since(start)
		c.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(journal)*float64(b.N)/replay.Seconds()/1e6, "replay-MB/s")
}

func rawHello(b *testing.B, addr string, hello *frame.Frame) (net.Conn, *frame.Decoder) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		b.Fatal(err)
	}
	enc, _ := frame.Append(nil, hello)
	c.Write(enc)
	return c, frame.NewDecoder(bufio.NewReaderSize(c, 64<<10))
}

// readStdout reads frames until at least n stdout bytes arrived and
// returns how many did.
func readStdout(b *testing.B, dec *frame.Decoder, n int) int {
	var f frame.Frame
	got := 0
	for got < n {
		if err := dec.Decode(&f); err != nil {
			b.Fatalf("after %d of %d stdout bytes: %v", got, n, err)
		}
		if f.Type == frame.TypeRefuse {
			b.Fatalf("refused: %s %s", f.Code, f.Message)
		}
		if f.Type == frame.TypeStdout {
			got += len(f.Data)
		}
	}
	return got
}

// benchServe serves srv without authentication: the ratios measure the
// wire's framing and flow control against raw TCP, as before TLS existed
// (BenchmarkRatioTLS measures the authenticated wire).
func benchServe(b *testing.B, srv *Server) string {
	srv.InsecureNoAuth = srv.Keys == nil
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go srv.Serve(ln)
	b.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

type countWriter int

func (c *countWriter) Write(p []byte) (int, error) { *c += countWriter(len(p)); return len(p), nil }

type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }
