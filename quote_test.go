package checkfu_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/checkfu/checkfu"
)

// TestQuote pins Quote's exact text, as netip_test.go pins parse errors.
func TestQuote(t *testing.T) {
	long := strings.Repeat("a", 100)
	tests := []struct{ in, want string }{
		{"", `""`},
		{"plain", `"plain"`},
		{"line\nbreak\x00", `"line\nbreak\x00"`},
		{"\xff\xfe", `"\xff\xfe"`},
		{`say "hi"`, `"say \"hi\""`},
		{strings.Repeat("a", 64), `"` + strings.Repeat("a", 64) + `"`},
		{long, `"` + strings.Repeat("a", 64) + `"... (100 bytes)`},
		// A 2-byte character at bytes 63-64 straddles the bound: dropped whole.
		{strings.Repeat("a", 63) + "é" + "zz", `"` + strings.Repeat("a", 63) + `"... (67 bytes)`},
		// A 4-byte character at bytes 62-65.
		{strings.Repeat("a", 62) + "😀" + "z", `"` + strings.Repeat("a", 62) + `"... (67 bytes)`},
		// A character that ends exactly at the bound is kept.
		{strings.Repeat("a", 62) + "é" + "zz", `"` + strings.Repeat("a", 62) + `é"... (66 bytes)`},
		// Invalid bytes at the bound are cut where they fall.
		{strings.Repeat("a", 63) + "\x80\x80\x80", `"` + strings.Repeat("a", 63) + `\x80"... (66 bytes)`},
		{strings.Repeat("\x80", 70), `"` + strings.Repeat(`\x80`, 64) + `"... (70 bytes)`},
	}
	for _, tt := range tests {
		if got := checkfu.Quote(tt.in); got != tt.want {
			t.Errorf("Quote(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

func FuzzQuote(f *testing.F) {
	f.Add("")
	f.Add(strings.Repeat("é", 40))
	f.Add(strings.Repeat("a", 63) + "😀")
	f.Fuzz(func(t *testing.T, s string) {
		q := checkfu.Quote(s)
		if strings.ContainsAny(q, "\n\r") {
			t.Fatalf("Quote(%q) spans lines: %s", s, q)
		}
		// At most MaxQuoted bytes of s, each escaped to at most 10 bytes,
		// plus quotes and the length note.
		if len(q) > 10*checkfu.MaxQuoted+40 {
			t.Fatalf("Quote(%q) is %d bytes", s, len(q))
		}
		if len(s) <= checkfu.MaxQuoted && strings.Contains(q, "bytes)") {
			t.Fatalf("Quote(%q) = %s cut a short string", s, q)
		}
	})
}

func ExampleQuote() {
	agentText := "rm -rf /\n" + strings.Repeat("A", 100)
	fmt.Println(checkfu.Quote(agentText))
	// Output: "rm -rf /\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"... (109 bytes)
}

// TestCause pins Cause's bound at its edge.
func TestCause(t *testing.T) {
	at := strings.Repeat("c", checkfu.MaxCause)
	tests := []struct {
		err  error
		want string
	}{
		{nil, ""},
		{errors.New("dial tcp: refused\n"), `"dial tcp: refused\n"`},
		{errors.New(at), `"` + at + `"`},
		{errors.New(at + "x"), `"` + at + `"... (513 bytes)`},
	}
	for _, tt := range tests {
		if got := checkfu.Cause(tt.err); got != tt.want {
			t.Errorf("Cause(%v) = %s, want %s", tt.err, got, tt.want)
		}
	}
}

func ExampleCause() {
	err := errors.New("tls: failed to verify certificate: x509: certificate is valid for example.com, not api.other.test")
	fmt.Println(checkfu.Cause(err))
	// Output: "tls: failed to verify certificate: x509: certificate is valid for example.com, not api.other.test"
}
