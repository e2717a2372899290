package custody

import (
	"bytes"
	"encoding/base64"
	"encoding/gob"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"testing"
)

const testCanary = "canary-5f1e0c2a-SECRET"

// holder puts a Secret where fmt ignores methods: an unexported field of
// another struct, by value and behind a pointer, in a slice and a map.
type holder struct {
	name  string
	s     Secret
	p     *Secret
	list  []*Secret
	byKey map[string]*Secret
	any   any
}

// Exported is the same with exported fields.
type Exported struct {
	S   Secret
	P   *Secret
	Any any
}

func newTestSecret() *Secret { return NewSecret([]byte(testCanary)) }

// leakForms returns the forms of the canary that must never appear.
func leakForms(t *testing.T, secret string) []string {
	t.Helper()
	return canaryForms([]byte(secret))
}

func assertNoLeak(t *testing.T, where, out string) {
	t.Helper()
	for _, f := range leakForms(t, testCanary) {
		if strings.Contains(out, f) {
			t.Errorf("%s leaks the secret (form %q): %s", where, f, out)
		}
	}
}

func TestSecretFmtNeverLeaks(t *testing.T) {
	s := newTestSecret()
	h := holder{name: "x", s: *s, p: s, list: []*Secret{s}, byKey: map[string]*Secret{"k": s}, any: s}
	e := Exported{S: *s, P: s, Any: s}
	values := map[string]any{
		"Secret": *s, "*Secret": s, "holder": h, "*holder": &h, "Exported": e, "*Exported": &e,
		"[]Secret": []Secret{*s}, "map": map[string]Secret{"k": *s}, "error": fmt.Errorf("wrap: %v", s),
	}
	verbs := []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d", "%T", "%p", "%10.3s", "% x"}
	for name, v := range values {
		for _, verb := range verbs {
			out := fmt.Sprintf(verb, v)
			assertNoLeak(t, name+" "+verb, out)
		}
		assertNoLeak(t, name+" Sprint", fmt.Sprint(v))
		assertNoLeak(t, name+" Sprintln", fmt.Sprintln(v))
	}
	if got := fmt.Sprint(s); got != redacted {
		t.Errorf("Sprint(secret) = %q, want %q", got, redacted)
	}
	if got := fmt.Sprintf("%#v", *s); got != "custody.Secret([redacted])" {
		t.Errorf("%%#v = %q", got)
	}
}

func TestSecretSlogNeverLeaks(t *testing.T) {
	s := newTestSecret()
	h := holder{name: "x", s: *s, p: s}
	var buf bytes.Buffer
	for _, handler := range []slog.Handler{
		slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}),
		slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}),
	} {
		l := slog.New(handler)
		l.Debug("secret", "s", s, "v", *s, "holder", h, "ptr", &h, slog.Any("any", s), slog.Group("g", "s", s))
		l.With("s", s).Info("with")
		l.Error("err", "err", fmt.Errorf("failed: %v", s))
	}
	if buf.Len() == 0 {
		t.Fatal("no log output captured")
	}
	assertNoLeak(t, "slog", buf.String())
	if !strings.Contains(buf.String(), redacted) {
		t.Errorf("slog output does not show %q: %s", redacted, buf.String())
	}
}

func TestSecretEncodersNeverLeak(t *testing.T) {
	s := newTestSecret()
	e := Exported{S: *s, P: s, Any: s}
	for name, v := range map[string]any{"Secret": *s, "*Secret": s, "Exported": e, "holder": holder{s: *s, p: s}} {
		j, err := json.Marshal(v)
		if err != nil {
			t.Fatalf("json.Marshal(%s): %v", name, err)
		}
		assertNoLeak(t, "json "+name, string(j))
	}
	txt, _ := s.MarshalText()
	assertNoLeak(t, "MarshalText", string(txt))
	var g bytes.Buffer
	err := gob.NewEncoder(&g).Encode(e)
	if err != nil {
		assertNoLeak(t, "gob error", err.Error())
	}
	assertNoLeak(t, "gob", g.String())
}

func TestSecretRevealAndDestroy(t *testing.T) {
	src := []byte(testCanary)
	s := NewSecret(src)
	if !bytes.Equal(src, make([]byte, len(testCanary))) {
		t.Errorf("NewSecret did not zero the caller's slice: %q", src)
	}
	var kept []byte
	err := s.reveal(func(b []byte) error {
		if string(b) != testCanary {
			t.Errorf("reveal gave %q", b)
		}
		kept = b
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(kept, make([]byte, len(testCanary))) {
		t.Errorf("slice retained by the callback still holds the secret")
	}
	sentinel := errors.New("use failed")
	if err := s.reveal(func([]byte) error { return sentinel }); err != sentinel {
		t.Errorf("reveal error = %v, want the callback's", err)
	}
	copyOf := *s
	raw := s.box().b // the custody buffer itself
	s.Destroy()
	if !bytes.Equal(raw, make([]byte, len(testCanary))) {
		t.Error("Destroy left the bytes in memory")
	}
	s.Destroy()
	if !s.Destroyed() || !copyOf.Destroyed() {
		t.Error("Destroyed() = false after Destroy")
	}
	for name, x := range map[string]*Secret{"destroyed": s, "copy": &copyOf, "zero": {}, "nil": nil} {
		err := x.reveal(func([]byte) error { t.Errorf("%s: callback ran", name); return nil })
		if !errors.Is(err, CodeSecretDestroyed) {
			t.Errorf("%s: reveal error = %v, want %s", name, err, CodeSecretDestroyed)
		}
	}
}

func TestRevealHook(t *testing.T) {
	s := newTestSecret()
	if err := revealAny(s, func(b []byte) error {
		if string(b) != testCanary {
			t.Errorf("got %q", b)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := revealAny("not a secret", func([]byte) error { return nil }); err == nil {
		t.Error("revealAny accepted a string")
	}
}

// canaryForms mirrors custodytest.CanaryForms for in-package tests (which
// cannot import custodytest without an import cycle).
func canaryForms(secret []byte) []string {
	var dec []string
	for _, c := range secret {
		dec = append(dec, strconv.Itoa(int(c)))
	}
	return []string{
		string(secret),
		hex.EncodeToString(secret),
		strings.ToUpper(hex.EncodeToString(secret)),
		base64.StdEncoding.EncodeToString(secret),
		base64.RawURLEncoding.EncodeToString(secret),
		"[" + strings.Join(dec, " ") + "]",
		strings.Join(dec, ","),
	}
}
