package vercel_test

import (
	"errors"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/adapters/internal/vendortest"
	"github.com/checkfu/checkfu/adapters/vercel"
	"github.com/checkfu/checkfu/egress"
	"github.com/checkfu/checkfu/internal/copytest"
)

func TestMapPolicy(t *testing.T) {
	for _, tc := range []struct {
		name   string
		policy string
		mode   string
		code   checkfu.Code
	}{
		{name: "none is deny-all", policy: `{"type":"none"}`, mode: "deny-all"},
		{name: "unrestricted is public subnets minus non-public ones", policy: `{"type":"unrestricted"}`},
		{name: "an allowlist would lose its ports", policy: `{"type":"allowlist","allowed_hosts":["api.example.com"]}`, code: vercel.CodeNetworkPolicyInexpressible},
		{name: "package managers too", policy: `{"type":"allowlist","allow_package_managers":true}`, code: vercel.CodeNetworkPolicyInexpressible},
	} {
		t.Run(tc.name, func(t *testing.T) {
			np, err := vercel.MapPolicy(vendortest.Compiled(t, tc.policy))
			if tc.code != "" {
				if !errors.Is(err, tc.code) {
					t.Fatalf("MapPolicy = %+v, %v; want %s", np, err, tc.code)
				}
				return
			}
			if err != nil || np.Mode != tc.mode {
				t.Fatalf("MapPolicy = %+v, %v", np, err)
			}
			if tc.mode == "" && (!slices.Equal(np.AllowSubnets, []string{"0.0.0.0/0", "2000::/3"}) || len(np.AllowDomains) != 0 || len(np.DenySubnets) != len(vercel.NonPublicIPv4())+len(vercel.NonPublicIPv6())) {
				t.Errorf("unrestricted = %+v", np)
			}
		})
	}
	if _, err := vercel.MapPolicy(nil); !errors.Is(err, checkfu.CodeConfigInvalid) {
		t.Errorf("MapPolicy(nil) = %v", err)
	}
}

// TestNonPublicAgreesWithEgress: the denied subnets keep out exactly
// what egress.IsPublic calls non-public, checked at every table
// boundary and on a deterministic sample of the whole space.
func TestNonPublicAgreesWithEgress(t *testing.T) {
	var denied []netip.Prefix
	for _, s := range slices.Concat(vercel.NonPublicIPv4(), vercel.NonPublicIPv6()) {
		denied = append(denied, netip.MustParsePrefix(s))
	}
	global6 := netip.MustParsePrefix("2000::/3")
	reached := func(a netip.Addr) bool {
		if a.Is6() && !global6.Contains(a) {
			return false
		}
		for _, p := range denied {
			if p.Contains(a) {
				return false
			}
		}
		return true
	}
	var probes []netip.Addr
	for _, p := range denied {
		a := p.Masked().Addr()
		probes = append(probes, a, a.Prev())
		last := a
		for range 1 {
			// the last address of p: set every host bit
			b := last.AsSlice()
			for i := p.Bits(); i < len(b)*8; i++ {
				b[i/8] |= 0x80 >> (i % 8)
			}
			last, _ = netip.AddrFromSlice(b)
		}
		probes = append(probes, last, last.Next())
	}
	r := rand.New(rand.NewPCG(14, 14))
	for range 200_000 {
		var b4 [4]byte
		v := r.Uint32()
		b4 = [4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}
		probes = append(probes, netip.AddrFrom4(b4))
		var b16 [16]byte
		h, l := r.Uint64(), r.Uint64()
		for i := range 8 {
			b16[i], b16[8+i] = byte(h>>(56-8*i)), byte(l>>(56-8*i))
		}
		b16[0] = 0x20 | b16[0]&0x1f // inside 2000::/3 mostly, where the tables matter
		probes = append(probes, netip.AddrFrom16(b16))
	}
	for _, a := range probes {
		if !a.IsValid() {
			continue
		}
		if got, want := reached(a), egress.IsPublic(a); got != want {
			t.Errorf("%s: the policy reaches it %t, egress.IsPublic says %t", a, got, want)
		}
	}
}

// TestSpecCatchesDeviation: the fakes' validator is not a rubber stamp.
func TestSpecCatchesDeviation(t *testing.T) {
	s := vendortest.LoadSpec(t, "testdata/sandbox.yaml", vendortest.Bearer)
	ok := func(_, v string) error {
		if v != "k" {
			return errors.New("no key")
		}
		return nil
	}
	for name, tc := range map[string]struct{ url, body string }{
		"no teamId":       {"/v3/sandboxes", `{"projectId":"p"}`},
		"unknown member":  {"/v3/sandboxes?teamId=t", `{"projectId":"p","stdin":true}`},
		"bad mode":        {"/v3/sandboxes?teamId=t", `{"projectId":"p","networkPolicy":{"mode":"some"}}`},
		"port in subnets": {"/v3/sandboxes?teamId=t", `{"projectId":"p","networkPolicy":{"subnets":{"allow":"1.2.3.4/32"}}}`},
		"control":         {"/v3/sandboxes?teamId=t", `{"projectId":"p","networkPolicy":{"mode":"deny-all"}}`},
	} {
		req := httptest.NewRequest(http.MethodPost, tc.url, strings.NewReader(tc.body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer k")
		_, err := s.Check(req, ok)
		if (err == nil) != (name == "control") {
			t.Errorf("%s: check = %v", name, err)
		}
	}
}

// TestStdioCaveatsIsACopy: what StdioCaveats returns, and so what one
// Evidence states, is its own.
func TestStdioCaveatsIsACopy(t *testing.T) {
	copytest.Fresh(t, "StdioCaveats", vercel.StdioCaveats, "stdin: carried exactly")
}
