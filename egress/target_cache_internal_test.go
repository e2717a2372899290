package egress

import (
	"fmt"
	"testing"
)

// TestTargetCacheMatchesCanonicalTarget checks that the guard's memo of
// canonical targets answers exactly what canonicalTarget computes, for
// the first and every later lookup, that it keeps no refusal, and that it
// stops growing at its bound.
func TestTargetCacheMatchesCanonicalTarget(t *testing.T) {
	inputs := []string{
		"example.com", "EXAMPLE.com:80", "example.com:8080", "ex\u0430mple.com", "ＥＸＡＭＰＬＥ.com:443",
		"127.0.0.1:8080", "[::1]:80", "[::1]", "[::ffff:127.0.0.1]:80", "1.2.3.4:443",
		"", "127.1", "example.com:0", "example.com:080", "[fe80::1%25eth0]:80", "a..b", "x:y:z",
	}
	for _, scheme := range []string{"http", "https"} {
		c := &targetCache{scheme: scheme}
		for round := 0; round < 3; round++ {
			for _, in := range inputs {
				got, err := c.get(in)
				want, werr := canonicalTarget(scheme, in)
				if (err == nil) != (werr == nil) {
					t.Fatalf("%s %q round %d: cache error %v, canonicalTarget error %v", scheme, in, round, err, werr)
				}
				if err != nil {
					if _, ok := c.m.Load(in); ok {
						t.Fatalf("%s %q: a refused authority was kept", scheme, in)
					}
					continue
				}
				if got.host != want.Host || got.port != want.Port || got.authority != want.Authority() || got.hostHeader != want.URL().Host {
					t.Fatalf("%s %q round %d: cache %+v, canonicalTarget %s %d %s %s", scheme, in, round, got, want.Host, want.Port, want.Authority(), want.URL().Host)
				}
			}
		}
	}

	c := &targetCache{scheme: "http"}
	for i := range maxCachedTargets + 100 {
		in := fmt.Sprintf("h%d.example:%d", i, 1+i%60000)
		got, err := c.get(in)
		if err != nil || got.authority != in {
			t.Fatalf("%q: %+v, %v", in, got, err)
		}
	}
	if n := c.n.Load(); n != maxCachedTargets {
		t.Fatalf("memo holds %d targets, want the bound %d", n, maxCachedTargets)
	}
}
