package broker_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/checkfu/checkfu/gateway/broker"
	"github.com/checkfu/checkfu/gateway/internal/rigtest"
)

// boundBroker serves a broker over a model rig's channel, with the
// refusal rate's clock the test's (the requests here are refused), and
// returns it and its socket; set, when not nil, adjusts the broker
// before it serves.
func boundBroker(t *testing.T, set func(*broker.Broker)) (*broker.Broker, string) {
	t.Helper()
	r := rigtest.NewModel(t)
	b, err := broker.New(r.Channel(rigtest.Member()))
	if err != nil {
		t.Fatal(err)
	}
	clock := &fakeClock{t: time.Date(2026, 12, 4, 0, 0, 0, 0, time.UTC)}
	broker.SetClock(b, clock.now, clock.sleep)
	if set != nil {
		set(b)
	}
	return b, rigtest.ServeBroker(t, b)
}

// waitSlots waits until the broker holds pending and models slots.
func waitSlots(t *testing.T, b *broker.Broker, pending, models int) {
	t.Helper()
	deadline := time.Now().Add(watchdog)
	for {
		p, m := broker.Slots(b)
		if p == pending && m == models {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("slots: %d pending, %d model; want %d and %d", p, m, pending, models)
		}
		time.Sleep(5 * time.Millisecond) // polling a counter, not a synchronisation
	}
}

// dialRaw dials the socket; the connection closes with the test.
func dialRaw(t *testing.T, path string) net.Conn {
	t.Helper()
	nc, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return nc
}

// closedUnanswered reports whether nc is closed by the broker without a
// byte of answer.
func closedUnanswered(t *testing.T, nc net.Conn) bool {
	t.Helper()
	nc.SetReadDeadline(time.Now().Add(watchdog))
	n, err := nc.Read(make([]byte, 1))
	var ne net.Error
	return n == 0 && err != nil && !(errors.As(err, &ne) && ne.Timeout())
}

// closedAtAll reports whether the broker closes nc, whatever it answers
// first.
func closedAtAll(t *testing.T, nc net.Conn) bool {
	t.Helper()
	nc.SetReadDeadline(time.Now().Add(watchdog))
	_, err := io.Copy(io.Discard, nc)
	var ne net.Error
	return !(errors.As(err, &ne) && ne.Timeout())
}

// TestBrokerModelConnectionBound: MaxModelConnections model connections
// are served at once; one more is refused, connections_exceeded.
func TestBrokerModelConnectionBound(t *testing.T) {
	b, path := boundBroker(t, nil)
	for range broker.MaxModelConnections {
		// A header block begun and not ended holds its connection.
		io.WriteString(dialRaw(t, path), "POST /v1/messages HTTP/1.1\r\n")
	}
	waitSlots(t, b, 0, broker.MaxModelConnections)
	plane, sandbox := net.Pipe()
	defer sandbox.Close()
	go io.WriteString(sandbox, "POST /v1/messages HTTP/1.1\r\n")
	if err := b.ServeConn(context.Background(), plane); !errors.Is(err, broker.CodeConnectionsExceeded) {
		t.Fatalf("model connection %d: %v", broker.MaxModelConnections+1, err)
	}
}

// TestBrokerPendingBound: MaxPending connections wait for their first
// byte at once; one more is refused at once, and a silent one is closed
// after FirstByteTimeout.
func TestBrokerPendingBound(t *testing.T) {
	b, path := boundBroker(t, nil)
	for range broker.MaxPending {
		dialRaw(t, path)
	}
	waitSlots(t, b, broker.MaxPending, 0)
	plane, sandbox := net.Pipe()
	defer sandbox.Close()
	if err := b.ServeConn(context.Background(), plane); !errors.Is(err, broker.CodeConnectionsExceeded) {
		t.Fatalf("pending connection %d: %v", broker.MaxPending+1, err)
	}
}

// TestBrokerFirstByteTimeout: a connection silent for FirstByteTimeout,
// or whose model request's header block takes longer, is closed
// unanswered; one idle for ModelIdleTimeout after an answer is closed.
func TestBrokerFirstByteTimeout(t *testing.T) {
	b, path := boundBroker(t, func(b *broker.Broker) { broker.SetTimeouts(b, 50*time.Millisecond, broker.ModelIdleTimeout) })
	if !closedUnanswered(t, dialRaw(t, path)) {
		t.Fatal("a silent connection was not closed")
	}
	slow := dialRaw(t, path)
	io.WriteString(slow, "POST /v1/messages HTTP/1.1\r\n")
	if !closedAtAll(t, slow) {
		t.Fatal("a header block that never ends kept its connection")
	}
	waitSlots(t, b, 0, 0)
	// The idle bound on a broker whose first-byte bound cannot cut the
	// request short, however slowly the test runs.
	b, path = boundBroker(t, func(b *broker.Broker) { broker.SetTimeouts(b, watchdog, 50*time.Millisecond) })
	idle := dialRaw(t, path)
	io.WriteString(idle, "POST /v1/messages HTTP/1.1\r\nHost: d\r\nContent-Length: 2\r\n\r\n{}")
	resp, err := http.ReadResponse(bufio.NewReader(idle), nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	if !closedUnanswered(t, idle) {
		t.Fatal("an idle model connection was not closed")
	}
	waitSlots(t, b, 0, 0)
}

// TestBrokerModelHeaderBound: a header block within MaxModelHeaderBytes
// is read; one past it (and Go's slack) is answered 431.
func TestBrokerModelHeaderBound(t *testing.T) {
	_, path := boundBroker(t, nil)
	for _, tc := range []struct {
		size int
		want int
	}{{broker.MaxModelHeaderBytes - 512, http.StatusForbidden}, {broker.MaxModelHeaderBytes + 4096 + 1, http.StatusRequestHeaderFieldsTooLarge}} {
		nc := dialRaw(t, path)
		io.WriteString(nc, "POST /v1/messages HTTP/1.1\r\nHost: d\r\nX-Pad: "+strings.Repeat("a", tc.size)+"\r\nContent-Length: 2\r\n\r\n{}")
		resp, err := http.ReadResponse(bufio.NewReader(nc), nil)
		if err != nil || resp.StatusCode != tc.want {
			t.Fatalf("a header of %d bytes: %v %v, want %d", tc.size, resp, err, tc.want)
		}
		resp.Body.Close()
	}
}
