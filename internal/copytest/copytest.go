package copytest

import (
	"slices"
	"testing"
)

// Fresh fails t unless get, named name in the failure, returns a
// non-empty slice, and, after every element of one result is overwritten
// with mark, the next call returns what the first did.
func Fresh[T comparable](t testing.TB, name string, get func() []T, mark T) {
	t.Helper()
	first := get()
	want := slices.Clone(first)
	if len(want) == 0 {
		t.Fatalf("%s returned nothing", name)
	}
	for i := range first {
		first[i] = mark
	}
	if got := get(); !slices.Equal(got, want) {
		t.Fatalf("after writing over a returned slice, %s = %v, want %v", name, got, want)
	}
}
