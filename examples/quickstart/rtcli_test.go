package main

// Attacks of the wt-rtcli pass on the quickstart's flags that held (mock:
// a loopback port nothing listens on, no PostgreSQL).

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestQuickstartStoreDSNNeverEchoesItsPassword: a -store DSN holding a
// password that fails (unreachable on loopback, unparsable) fails the run
// without printing any part of the password, with the -store hint.
func TestQuickstartStoreDSNNeverEchoesItsPassword(t *testing.T) {
	const pw = "Pw7Zq"
	for _, dsn := range []string{
		"postgres://u:" + pw + "@127.0.0.1:1/db?connect_timeout=2",
		"postgres://u:" + pw + "@[::1/db",
		"u:" + pw + "@h/db",
		"host=127.0.0.1 port=1 connect_timeout=2 password=" + pw,
	} {
		var out bytes.Buffer
		err := run(context.Background(), options{provider: "process", agent: "codex", store: dsn}, &out)
		if err == nil {
			t.Fatalf("-store %q: the run succeeded", dsn)
		}
		text := err.Error() + out.String() + hint(err)
		t.Logf("-store %q: %v", dsn, err)
		if !strings.Contains(hint(err), "-store") {
			t.Errorf("-store %q: failed before the store (%v): the test proves nothing", dsn, err)
		}
		if strings.Contains(text, pw) || strings.Contains(text, pw[:3]) {
			t.Errorf("-store %q: the password is printed: %q", dsn, text)
		}
	}
}

// TestUsageErrorsAreEscaped: a -provider or -agent holding terminal
// control is named escaped (%q) in the usage error.
func TestUsageErrorsAreEscaped(t *testing.T) {
	for _, o := range []options{{provider: "\x1b]0;owned\x07", agent: "codex"}, {provider: "process", agent: "\x1b[2J\r"}} {
		err := checkUsage(o, nil)
		if err == nil || strings.ContainsAny(err.Error(), "\x1b\x07\r") {
			t.Errorf("checkUsage(%q) = %q; want a usage error with the value escaped", o.provider+o.agent, err)
		}
	}
	if err := checkUsage(options{provider: "process", agent: "codex"}, []string{"\x1b[2J"}); err == nil || strings.Contains(err.Error(), "\x1b") {
		t.Errorf("checkUsage with an argument = %v; want it escaped", err)
	}
}
