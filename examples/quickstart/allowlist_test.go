package main

import (
	"strings"
	"testing"

	"github.com/checkfu/checkfu/runner/runnertest"
)

// TestAllowlistCheckCanFail: step 8's check passes on what a guard that
// decided every request gives, and fails when the refused host reached
// the upstream, when the direct connection did, when the allowed host
// was not reached exactly once, and when the agent said anything else
// than the answers the guard must give.
func TestAllowlistCheckCanFail(t *testing.T) {
	script := []runnertest.Step{
		{Get: "http://api.example.com:8080/"},
		{Get: "http://pm.example:8080/"},
		{Get: "http://127.0.0.1:8080/", Direct: true},
	}
	good := []string{
		"[scripted] GET http://api.example.com:8080/ -> 200",
		"[scripted] GET http://pm.example:8080/ -> 403 host_not_allowed",
		"[scripted] GET http://127.0.0.1:8080/ (ignoring the proxy) -> no answer: dial tcp 127.0.0.1:8080: connect: connection refused",
	}
	if err := checkAllowlist(good, script, 1, 0, 0); err != nil {
		t.Fatalf("the guard's answers: %v", err)
	}
	with := func(i int, s string) []string {
		out := append([]string(nil), good...)
		out[i] = s
		return out
	}
	for _, tt := range []struct {
		name                    string
		said                    []string
		allowed, refused, other int64
		want                    string
	}{
		{"the refused host reached the upstream", good, 1, 1, 0, "host the guard must refuse"},
		{"the direct connection reached the upstream", good, 1, 0, 1, "naming neither host"},
		{"the allowed host never reached", good, 0, 0, 0, "want 1"},
		{"the allowed host reached twice", good, 2, 0, 0, "want 1"},
		{"the allowed host refused", with(0, "[scripted] GET http://api.example.com:8080/ -> 403 host_not_allowed"), 1, 0, 0, "agent said"},
		{"the package-manager host answered", with(1, "[scripted] GET http://pm.example:8080/ -> 200"), 1, 0, 0, "agent said"},
		{"refused by another code", with(1, "[scripted] GET http://pm.example:8080/ -> 403 port_not_allowed"), 1, 0, 0, "agent said"},
		{"the direct connection answered", with(2, "[scripted] GET http://127.0.0.1:8080/ (ignoring the proxy) -> 200"), 1, 0, 0, "agent said"},
		{"a step unsaid", good[:2], 1, 0, 0, "said 2 things"},
	} {
		if err := checkAllowlist(tt.said, script, tt.allowed, tt.refused, tt.other); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want an error with %q", tt.name, err, tt.want)
		}
	}
}
