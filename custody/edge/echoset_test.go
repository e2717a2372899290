package edge

import (
	"bytes"
	"testing"

	"pgregory.net/rapid"
)

// TestGramFilterFindsWhatEachFormSearchFinds: on texts made of random
// bytes and pieces of the forms (near misses, whole forms at any offset,
// forms cut at either end), the one-pass filter answers exactly as the
// search form by form does.
func TestGramFilterFindsWhatEachFormSearchFinds(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		tok := rapid.SliceOfN(rapid.Byte(), minFilteredForm, 48).Draw(t, "tok")
		list, buf := echoForms(tok)
		defer clear(buf)
		g := newGramFilter(list)
		if g == nil {
			if shortest(list) >= minFilteredForm {
				t.Fatalf("no filter for forms of %d bytes at least", shortest(list))
			}
			return
		}
		defer clear(g.grams)
		var text []byte
		for range rapid.IntRange(0, 40).Draw(t, "pieces") {
			switch rapid.IntRange(0, 2).Draw(t, "kind") {
			case 0:
				text = append(text, rapid.SliceOfN(rapid.Byte(), 0, 64).Draw(t, "bytes")...)
			case 1:
				f := list[rapid.IntRange(0, len(list)-1).Draw(t, "form")]
				i := rapid.IntRange(0, len(f)).Draw(t, "from")
				j := rapid.IntRange(i, len(f)).Draw(t, "to")
				text = append(text, f[i:j]...)
			case 2:
				text = append(text, list[rapid.IntRange(0, len(list)-1).Draw(t, "whole")]...)
			}
		}
		if got, want := g.containsAny(text, list), containsEach(text, list); got != want {
			t.Fatalf("filter says %v, form by form %v, in %q", got, want, text)
		}
	})
}

// TestEchoSetFiltersOnlyLongTexts: a filtered set searches a text of
// filterMinText bytes or more through its filter, and finds each form at
// its very start, at its very end, and at every offset across two
// strides (where a filter reading one gram too few would miss one).
func TestEchoSetFiltersOnlyLongTexts(t *testing.T) {
	tok := []byte("sk-test-0123456789abcdefghijklmnop")
	list, buf := echoForms(tok)
	defer clear(buf)
	set := newEchoSet(list, true)
	defer set.clear()
	pad := bytes.Repeat([]byte{'x'}, filterMinText)
	for _, f := range list {
		for _, text := range [][]byte{append(bytes.Clone(f), pad...), append(bytes.Clone(pad), f...)} {
			if !containsAny(text, set) {
				t.Fatalf("form %q not found in a text of %d bytes", f, len(text))
			}
		}
		for off := range 2 * len(f) {
			text := append(append(bytes.Clone(pad[:off]), f...), pad...)
			if !containsAny(text, set) {
				t.Fatalf("form %q not found at offset %d", f, off)
			}
		}
	}
	if set.filter == nil {
		t.Fatal("a filtered set searched long texts without its filter")
	}
	if containsAny(pad, set) {
		t.Fatal("found a form in padding")
	}
}
