package vercel_test

import (
	"slices"
	"testing"

	"github.com/checkfu/checkfu/adapters/internal/vendortest"
	"github.com/checkfu/checkfu/adapters/vercel"
	"github.com/checkfu/checkfu/internal/copytest"
)

// TestNonPublicIsACopy: the ranges NonPublicIPv4 and NonPublicIPv6
// return, and the deny list of a mapped "unrestricted" policy, are the
// caller's own; writing over them changes neither the next call's answer
// nor what "unrestricted" denies.
func TestNonPublicIsACopy(t *testing.T) {
	const mark = "255.255.255.255/32"
	copytest.Fresh(t, "NonPublicIPv4", vercel.NonPublicIPv4, mark)
	copytest.Fresh(t, "NonPublicIPv6", vercel.NonPublicIPv6, mark)
	want := slices.Concat(vercel.NonPublicIPv4(), vercel.NonPublicIPv6())
	copytest.Fresh(t, "unrestricted's DenySubnets", func() []string {
		np, err := vercel.MapPolicy(vendortest.Compiled(t, `{"type":"unrestricted"}`))
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(np.DenySubnets, want) {
			t.Fatalf("unrestricted denies %q, want %q", np.DenySubnets, want)
		}
		return np.DenySubnets
	}, mark)
}
