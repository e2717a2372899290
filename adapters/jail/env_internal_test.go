//go:build linux

package jail

import (
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

func TestLastWins(t *testing.T) {
	got := lastWins([]string{"PATH=/bin", "HOME=/w", "A=1", "HOME=/h", "bare", "A=2", "A=3", "B="})
	want := []string{"PATH=/bin", "HOME=/h", "A=3", "bare", "B="}
	if !slices.Equal(got, want) {
		t.Errorf("lastWins = %q, want %q", got, want)
	}
}

// TestLastWinsProperty: every name keeps exactly one assignment, the last
// one it was given, and no name is added or lost.
func TestLastWinsProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		names := []string{"A", "B", "HOME", "PATH"}
		env := rapid.SliceOf(rapid.Custom(func(t *rapid.T) string {
			return rapid.SampledFrom(names).Draw(t, "name") + "=" + rapid.StringMatching(`[a-z=]{0,3}`).Draw(t, "value")
		})).Draw(t, "env")
		want := map[string]string{}
		for _, kv := range env {
			k, _, _ := strings.Cut(kv, "=")
			want[k] = kv
		}
		got := lastWins(env)
		seen := map[string]bool{}
		for _, kv := range got {
			k, _, _ := strings.Cut(kv, "=")
			if seen[k] {
				t.Fatalf("lastWins(%q) = %q: %s twice", env, got, k)
			}
			seen[k] = true
			if kv != want[k] {
				t.Fatalf("lastWins(%q) = %q: %s, want %s", env, got, kv, want[k])
			}
		}
		if len(seen) != len(want) {
			t.Fatalf("lastWins(%q) = %q: %d names, want %d", env, got, len(seen), len(want))
		}
	})
}
