package vendorkit_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/checkfu/checkfu/acp/wire"
	"github.com/checkfu/checkfu/adapters"
	"github.com/checkfu/checkfu/adapters/internal/vendorkit"
)

type proc struct{ n int }

func TestSlot(t *testing.T) {
	var s vendorkit.Slot[*proc]
	made := 0
	mk := func() *proc { made++; return &proc{made} }
	p1, err := s.Open("acme", "inst-1", mk)
	if err != nil || p1 == nil {
		t.Fatalf("Open = %v, %v", p1, err)
	}
	if p, err := s.Open("acme", "inst-1", mk); !errors.Is(err, wire.CodeProcessAlreadyOpen) || p != nil || made != 1 ||
		!strings.Contains(err.Error(), `acme: sandbox "inst-1"'s process has not been reaped`) {
		t.Fatalf("a second Open = %v, %v (made %d)", p, err, made)
	}
	s.Release(&proc{99}) // not the live one: no effect
	if _, err := s.Open("acme", "inst-1", mk); !errors.Is(err, wire.CodeProcessAlreadyOpen) {
		t.Fatalf("Release of another process emptied the slot: %v", err)
	}
	s.Release(p1)
	p2, err := s.Open("acme", "inst-1", mk)
	if err != nil || p2 == p1 {
		t.Fatalf("Open after Release = %v, %v", p2, err)
	}
	first, live := s.Destroy()
	if !first || live != p2 {
		t.Fatalf("Destroy = %v, %v", first, live)
	}
	if first, _ := s.Destroy(); first {
		t.Fatal("a second Destroy reported first")
	}
	s.Release(p2)
	if p, err := s.Open("acme", "inst-1", mk); !errors.Is(err, adapters.CodeInstanceDestroyed) || p != nil ||
		!strings.Contains(err.Error(), `acme: sandbox "inst-1" was destroyed`) {
		t.Fatalf("Open after Destroy = %v, %v", p, err)
	}
}
