package edge

import (
	"bytes"
	"testing"

	"pgregory.net/rapid"
)

// perFormIndex is the echo search as it was before the one-pass search:
// one bytes.Index pass (bytes.Contains) over s per form. It is the reference the one-pass
// search is held to.
func perFormIndex(s []byte, forms [][]byte) bool {
	for _, f := range forms {
		if bytes.Contains(s, f) { // bytes.Index(s, f) >= 0
			return true
		}
	}
	return false
}

// oneSetSearch searches s for forms through a set made for one answer,
// as refuseEcho does, and clears the set.
func oneSetSearch(s []byte, forms [][]byte) bool {
	set := newEchoSet(forms, false)
	defer set.clear()
	return containsAny(s, set)
}

// drawForms draws a set of forms from a small alphabet (so that forms
// are often prefixes of each other, overlap, and recur in the text): one
// to six forms of one to twenty bytes, some of them prefixes or suffixes
// of an earlier one.
func drawForms(t *rapid.T) [][]byte {
	b := rapid.SampledFrom([]byte("ab\x00\xffz"))
	var forms [][]byte
	for range rapid.IntRange(1, 6).Draw(t, "forms") {
		if len(forms) > 0 && rapid.Bool().Draw(t, "derived") {
			f := forms[rapid.IntRange(0, len(forms)-1).Draw(t, "of")]
			i := rapid.IntRange(0, len(f)-1).Draw(t, "from")
			j := rapid.IntRange(i+1, len(f)).Draw(t, "to")
			forms = append(forms, bytes.Clone(f[i:j]))
			continue
		}
		forms = append(forms, rapid.SliceOfN(b, 1, 20).Draw(t, "form"))
	}
	return forms
}

// drawText draws a text of random bytes from the same alphabet, whole
// forms and pieces of forms, at any offset, its ends included.
func drawText(t *rapid.T, forms [][]byte) []byte {
	b := rapid.SampledFrom([]byte("ab\x00\xffz"))
	var text []byte
	for range rapid.IntRange(0, 12).Draw(t, "pieces") {
		switch rapid.IntRange(0, 2).Draw(t, "kind") {
		case 0:
			text = append(text, rapid.SliceOfN(b, 0, 40).Draw(t, "bytes")...)
		case 1:
			f := forms[rapid.IntRange(0, len(forms)-1).Draw(t, "form")]
			i := rapid.IntRange(0, len(f)).Draw(t, "cut from")
			j := rapid.IntRange(i, len(f)).Draw(t, "cut to")
			text = append(text, f[i:j]...)
		case 2:
			text = append(text, forms[rapid.IntRange(0, len(forms)-1).Draw(t, "whole")]...)
		}
	}
	return text
}

// TestOneSetSearchAgreesWithPerFormIndex: the one-pass search answers
// exactly as one bytes.Index pass per form, on any text and any set of
// forms: forms one byte long, forms that are prefixes or pieces of each
// other, texts shorter than every form, forms at the text's ends.
func TestOneSetSearchAgreesWithPerFormIndex(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		forms := drawForms(t)
		text := drawText(t, forms)
		if got, want := oneSetSearch(text, forms), perFormIndex(text, forms); got != want {
			t.Fatalf("one pass says %v, per form %v: forms %q in %q", got, want, forms, text)
		}
	})
}

// TestOneSetSearchFindsEveryFormEverywhere: each of a credential's echo
// forms is found at every offset across two of the sampler's strides
// (where a sampler reading one gram too few, or indexing one offset too
// few, would miss one), and at the very end of the text.
func TestOneSetSearchFindsEveryFormEverywhere(t *testing.T) {
	for _, tok := range [][]byte{[]byte("sk-test-0123456789abcdefghijklmnop"), []byte("k"), []byte("abcdefgh")} {
		list, buf := echoForms(tok)
		pad := bytes.Repeat([]byte{'x'}, 3*len(buf)+16)
		stride := shortest(list) - min(gramLen, shortest(list)) + 1
		for i, f := range list {
			for off := range 2*stride + 1 {
				text := append(append(bytes.Clone(pad[:off]), f...), pad[:len(f)]...)
				if !oneSetSearch(text, list) {
					t.Fatalf("token of %d bytes: form %d not found at offset %d", len(tok), i, off)
				}
				if !oneSetSearch(text[:off+len(f)], list) {
					t.Fatalf("token of %d bytes: form %d not found at the end, offset %d", len(tok), i, off)
				}
			}
		}
		if oneSetSearch(pad, list) {
			t.Fatalf("token of %d bytes: found in padding", len(tok))
		}
		clear(buf)
	}
}

// TestEchoSetClearZeroesSampler: clearing a set zeroes what its sampler
// derived from the forms, its filter's bits and its table of first
// bytes.
func TestEchoSetClearZeroesSampler(t *testing.T) {
	list, buf := echoForms([]byte("sk-test-0123456789abcdefghijklmnop"))
	defer clear(buf)
	set := newEchoSet(list, false)
	if containsAny(bytes.Repeat([]byte{'x'}, 200), set) {
		t.Fatal("found a form in padding")
	}
	if !set.sampled || set.sampler.bits == ([samplerBits / 64]uint64{}) {
		t.Fatal("the search did not build the sampler")
	}
	set.clear()
	if set.sampler.bits != ([samplerBits / 64]uint64{}) || set.sampler.starts != ([256]bool{}) {
		t.Fatal("a cleared set's sampler still holds bits of the forms")
	}
}

// FuzzOneSetSearch holds the one-pass search to one bytes.Index pass per
// form on any text and forms: cuts gives the forms' lengths (1 to 32),
// taken one after another from pool.
func FuzzOneSetSearch(f *testing.F) {
	f.Add([]byte("xxabcxx"), []byte("abcab"), []byte{2, 1})
	f.Add([]byte("a"), []byte("a"), []byte{0})
	f.Add([]byte("aaaaaaaaaaaaaaaaaaab"), []byte("aaaaaaaaabaaaaaaaa"), []byte{9, 7})
	f.Add([]byte("ghp_0123456789abcdef0123456789"), []byte("0123456789abcdef0123456789ghp_"), []byte{25, 3})
	f.Add([]byte("\x00\x00\x00\x00\x00\x00\x00\x00\x00"), []byte("\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"), []byte{9})
	f.Fuzz(func(t *testing.T, text, pool, cuts []byte) {
		var forms [][]byte
		for _, c := range cuts {
			n := int(c%32) + 1
			if n > len(pool) {
				break
			}
			forms, pool = append(forms, pool[:n]), pool[n:]
		}
		if len(forms) == 0 {
			return
		}
		if got, want := oneSetSearch(text, forms), perFormIndex(text, forms); got != want {
			t.Fatalf("one pass says %v, per form %v: forms %q in %q", got, want, forms, text)
		}
	})
}
