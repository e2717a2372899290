package edge

import (
	"bytes"
	"fmt"
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

// TestStreamSetViewsAgreeWithFreshOnes: a stream set, which keeps its
// view buffers from one text to the next, answers each text of a
// sequence as a set made for that text alone does, whatever the texts
// before it held (forms wrapped in lines, JSON-escaped, texts longer and
// shorter than the last); and between texts its kept buffers hold only
// zeros.
func TestStreamSetViewsAgreeWithFreshOnes(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		tok := rapid.SliceOfN(rapid.SampledFrom([]byte("abcXYZ019+/=_-")), 4, 40).Draw(t, "tok")
		list, buf := echoForms(tok)
		defer clear(buf)
		stream := newEchoSet(list, true)
		defer stream.clear()
		for range rapid.IntRange(1, 6).Draw(t, "texts") {
			var text []byte
			for range rapid.IntRange(0, 30).Draw(t, "pieces") {
				switch rapid.IntRange(0, 3).Draw(t, "kind") {
				case 0:
					text = append(text, rapid.SliceOfN(rapid.SampledFrom([]byte("ab\r\n\\\"u0/ ")), 0, 64).Draw(t, "bytes")...)
				case 1:
					text = append(text, bytes.Repeat([]byte("data: x\n\n"), rapid.IntRange(0, filterMinText/4).Draw(t, "long"))...)
				case 2: // a form cut by a line break
					f := list[rapid.IntRange(0, len(list)-1).Draw(t, "form")]
					i := rapid.IntRange(0, len(f)).Draw(t, "cut")
					text = append(append(append(text, f[:i]...), "\r\n"[rapid.IntRange(0, 1).Draw(t, "eol"):]...), f[i:]...)
				case 3: // a form with its first byte JSON-escaped
					f := list[rapid.IntRange(0, len(list)-1).Draw(t, "escaped")]
					text = append(fmt.Appendf(text, `\u%04x`, f[0]), f[1:]...)
				}
			}
			fresh := newEchoSet(list, false)
			if got, want := echoIn(text, stream), echoIn(text, fresh); got != want {
				t.Fatalf("stream set says %v, a fresh set %v, in %q", got, want, text)
			}
			for i, v := range stream.views {
				if !bytes.Equal(v[:cap(v)], make([]byte, cap(v))) {
					t.Fatalf("view buffer %d holds bytes after a text", i)
				}
			}
		}
	})
}

// TestStreamSetKeepsViewsUpToMaxKeptView: a stream set keeps a view's
// buffer (the JSON view, the line-break view) for a text of maxKeptView
// bytes, and none for one of maxKeptView+1; a set made for one answer
// keeps none at all.
func TestStreamSetKeepsViewsUpToMaxKeptView(t *testing.T) {
	list, buf := echoForms([]byte("sk-test-0123456789abcdefghijklmnop"))
	defer clear(buf)
	for view, unit := range map[int]string{viewJSON: `\/`, viewJoined: "x\n"} {
		for _, c := range []struct {
			stream bool
			n      int
			kept   bool
		}{{true, maxKeptView, true}, {true, maxKeptView + 1, false}, {false, maxKeptView, false}} {
			set := newEchoSet(list, c.stream)
			if echoIn(bytes.Repeat([]byte(unit), c.n/2+1)[:c.n], set) {
				t.Fatal("found a form in padding")
			}
			if kept := cap(set.views[view]) >= c.n; kept != c.kept {
				t.Fatalf("stream %v, text of %d bytes: view %d kept %d bytes", c.stream, c.n, view, cap(set.views[view]))
			}
			set.clear()
			for _, v := range set.views {
				if v != nil {
					t.Fatal("clear left a view buffer")
				}
			}
		}
	}
}
