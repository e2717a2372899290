package rigtest

import (
	"context"
	"path/filepath"

	"github.com/checkfu/checkfu/gateway/broker"
	"github.com/checkfu/checkfu/gateway/door"
)

// TempDirTB is a TB that makes temporary directories.
type TempDirTB interface {
	TB
	TempDir() string
}

// ServeBroker serves b on a Unix socket in a fresh directory, as the
// Runner serves it to a sandbox, and returns the socket's path. Serve
// stops with the test, which fails if Serve returned an error.
func ServeBroker(t TempDirTB, b *broker.Broker) string {
	t.Helper()
	ln, err := broker.ListenUnix(filepath.Join(t.TempDir(), "broker.sock"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- b.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Fatal("Serve: ", err)
		}
	})
	return ln.Addr().String()
}

// ServeModelRelay starts the door's model relay on a free loopback port,
// relaying to socket, and returns its address. It stops with the test,
// which fails if the relay returned an error.
func ServeModelRelay(t TB, socket string) string {
	t.Helper()
	ln, err := door.ListenModel("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- door.ServeModel(ctx, ln, socket) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Fatal("ServeModel: ", err)
		}
	})
	return ln.Addr().String()
}
