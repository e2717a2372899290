package acp_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/checkfu/checkfu/acp"
)

// ndjson returns n lines of about size bytes each: session/update
// notifications as an agent writes them.
func ndjson(n, size int) []byte {
	var b bytes.Buffer
	pad := strings.Repeat("x", max(0, size-120))
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"%d %s"}}}}`+"\n", i, pad)
	}
	return b.Bytes()
}

func benchFraming(b *testing.B, size int) {
	data := ndjson(max(1, (4<<20)/size), size)
	b.Run("acp.Reader", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			r := acp.NewReader(bytes.NewReader(data), 0)
			for {
				if _, err := r.ReadLine(); err != nil {
					if err != io.EOF {
						b.Fatal(err)
					}
					break
				}
			}
		}
	})
	b.Run("bufio.Scanner", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			s := bufio.NewScanner(bytes.NewReader(data))
			s.Buffer(make([]byte, 64<<10), acp.DefaultMaxLineBytes)
			for s.Scan() {
			}
			if s.Err() != nil {
				b.Fatal(s.Err())
			}
		}
	})
}

// BenchmarkFraming compares the bounded reader with bufio.Scanner (given
// the same bound) on 1 KiB and 1 MiB lines.
func BenchmarkFraming(b *testing.B) {
	b.Run("1KiB", func(b *testing.B) { benchFraming(b, 1<<10) })
	b.Run("1MiB", func(b *testing.B) { benchFraming(b, 1<<20) })
}

// BenchmarkWriter compares WriteLine (bound and newline checks, one write
// per short line) with a bare write of line and newline.
func BenchmarkWriter(b *testing.B) {
	line := bytes.TrimSuffix(ndjson(1, 1<<10), []byte("\n"))
	b.Run("acp.Writer", func(b *testing.B) {
		w := acp.NewWriter(io.Discard, 0)
		b.SetBytes(int64(len(line) + 1))
		for b.Loop() {
			if err := w.WriteLine(line); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("raw", func(b *testing.B) {
		buf := make([]byte, 0, 4096)
		b.SetBytes(int64(len(line) + 1))
		for b.Loop() {
			buf = append(append(buf[:0], line...), '\n')
			io.Discard.Write(buf)
		}
	})
}

// BenchmarkUpdatePath measures the Client's update path (read, parse,
// decode the notification, call OnUpdate) on a replay-sized burst of
// 1 KiB updates, against bufio.Scanner plus one json.Unmarshal per line.
func BenchmarkUpdatePath(b *testing.B) {
	data := ndjson(4096, 1<<10)
	b.Run("acp.Client", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			var n int
			c := acp.NewClient(bytes.NewReader(data), io.Discard, acp.Config{OnUpdate: func(acp.SessionNotification) { n++ }})
			<-c.Done()
			if n != 4096 {
				b.Fatalf("%d updates", n)
			}
		}
	})
	b.Run("Scanner+Unmarshal", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			s := bufio.NewScanner(bytes.NewReader(data))
			s.Buffer(make([]byte, 64<<10), acp.DefaultMaxLineBytes)
			for s.Scan() {
				var m struct {
					Params struct {
						SessionID string          `json:"sessionId"`
						Update    json.RawMessage `json:"update"`
					} `json:"params"`
				}
				if err := json.Unmarshal(s.Bytes(), &m); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}
