package e2b_test

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
	"github.com/checkfu/checkfu/adapters/e2b"
	"github.com/checkfu/checkfu/adapters/internal/vendortest"
	"github.com/checkfu/checkfu/egress"
)

func TestMapPolicy(t *testing.T) {
	gateway := []egress.HostPort{{Host: "gateway.checkfu.example", Port: 443}}
	for _, tc := range []struct {
		name     string
		policy   string
		plane    []egress.HostPort
		internet bool
		allow    []string
		deny     []string // a prefix of DenyOut is enough
		caveats  []string // substrings that must appear
		code     checkfu.Code
	}{
		{name: "none is exact", policy: `{"type":"none"}`},
		{name: "none with a plane host keeps the plane reachable", policy: `{"type":"none"}`, plane: gateway,
			allow: []string{"gateway.checkfu.example"}, caveats: []string{"plane's destinations stay reachable", "share one allowOut list"}},
		{name: "unrestricted denies every non-public range", policy: `{"type":"unrestricted"}`, internet: true,
			deny: []string{"0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12"}, caveats: []string{"ipv6"}},
		{name: "allowlist on 443", policy: `{"type":"allowlist","allowed_hosts":["b.example.com","a.example.com"]}`,
			allow: []string{"a.example.com", "b.example.com"}, caveats: []string{"port 80", "8.8.8.8", "private answer"}},
		{name: "allowlist flattens the plane into the workload's list", policy: `{"type":"allowlist","allowed_hosts":["a.example.com"]}`, plane: gateway,
			allow: []string{"a.example.com", "gateway.checkfu.example"}, caveats: []string{"share one allowOut list"}},
		{name: "one host on 80 and 443 is one entry", policy: `{"type":"allowlist","allowed_hosts":["a.example.com","a.example.com:80"]}`,
			allow: []string{"a.example.com"}},
		{name: "a port E2B filters by address only is refused", policy: `{"type":"allowlist","allowed_hosts":["db.example.com:5432"]}`,
			code: e2b.CodePolicyInexpressible},
		{name: "a plane host on such a port is refused too", policy: `{"type":"none"}`, plane: []egress.HostPort{{Host: "relay.example", Port: 8443}},
			code: e2b.CodePolicyInexpressible},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, err := e2b.MapPolicy(vendortest.Compiled(t, tc.policy), tc.plane)
			if tc.code != "" {
				if !errors.Is(err, tc.code) {
					t.Fatalf("MapPolicy = %+v, %v; want %s", n, err, tc.code)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if n.AllowInternetAccess != tc.internet || !slices.Equal(n.AllowOut, tc.allow) && !(len(n.AllowOut) == 0 && len(tc.allow) == 0) {
				t.Errorf("MapPolicy = internet %t allowOut %q, want %t %q", n.AllowInternetAccess, n.AllowOut, tc.internet, tc.allow)
			}
			if len(n.DenyOut) < len(tc.deny) || !slices.Equal(n.DenyOut[:len(tc.deny)], tc.deny) {
				t.Errorf("DenyOut = %q, want it to start %q", n.DenyOut, tc.deny)
			}
			if !tc.internet && len(n.DenyOut) != 0 {
				t.Errorf("DenyOut = %q with internet access off", n.DenyOut)
			}
			all := strings.Join(n.Caveats, "\n")
			for _, c := range tc.caveats {
				if !strings.Contains(all, c) {
					t.Errorf("caveats %q lack %q", n.Caveats, c)
				}
			}
			if len(n.AllowOut) == 0 && tc.policy == `{"type":"none"}` && len(n.Caveats) != 0 {
				t.Errorf("an exact mapping has caveats %q", n.Caveats)
			}
		})
	}
}

func TestMapPolicyRefusesNoPolicy(t *testing.T) {
	if _, err := e2b.MapPolicy(nil, nil); !errors.Is(err, checkfu.CodeConfigInvalid) {
		t.Errorf("MapPolicy(nil) = %v, want config_invalid", err)
	}
	if _, err := e2b.MapPolicy(&egress.CompiledPolicy{}, nil); !errors.Is(err, checkfu.CodeConfigInvalid) {
		t.Errorf("MapPolicy(zero) = %v, want config_invalid", err)
	}
}

// TestDenyOutAgreesWithEgress: under unrestricted, denyOut keeps out
// exactly the IPv4 addresses egress.IsPublic calls non-public (at every
// range boundary and on a deterministic sample).
func TestDenyOutAgreesWithEgress(t *testing.T) {
	n, err := e2b.MapPolicy(vendortest.Compiled(t, `{"type":"unrestricted"}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	var denied []netip.Prefix
	for _, s := range n.DenyOut {
		denied = append(denied, netip.MustParsePrefix(s))
	}
	var probes []netip.Addr
	for _, p := range denied {
		a := p.Masked().Addr()
		b := a.As4()
		v := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
		last := v | (1<<(32-p.Bits()) - 1)
		probes = append(probes, a, a.Prev(), netip.AddrFrom4([4]byte{byte(last >> 24), byte(last >> 16), byte(last >> 8), byte(last)}))
		if last != ^uint32(0) {
			last++
			probes = append(probes, netip.AddrFrom4([4]byte{byte(last >> 24), byte(last >> 16), byte(last >> 8), byte(last)}))
		}
	}
	r := rand.New(rand.NewPCG(14, 2))
	for range 200_000 {
		v := r.Uint32()
		probes = append(probes, netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}))
	}
	for _, a := range probes {
		if !a.IsValid() {
			continue
		}
		in := slices.ContainsFunc(denied, func(p netip.Prefix) bool { return p.Contains(a) })
		if in == egress.IsPublic(a) {
			t.Errorf("%s: denied %t, egress.IsPublic %t", a, in, egress.IsPublic(a))
		}
	}
}

// TestSpecCatchesDeviation: the fakes' validator is not a rubber stamp.
func TestSpecCatchesDeviation(t *testing.T) {
	s := vendortest.LoadSpec(t, "testdata/control.yaml", vendortest.APIKeyHeader)
	ok := func(_, v string) error {
		if v != "k" {
			return errors.New("no key")
		}
		return nil
	}
	for name, tc := range map[string]struct{ body, key string }{
		"unknown member": {`{"templateID":"base","allowInternetAccess":false}`, "k"},
		"wrong type":     {`{"templateID":"base","timeout":"5"}`, "k"},
		"no template":    {`{"timeout":5}`, "k"},
		"no key":         {`{"templateID":"base"}`, ""},
	} {
		req := httptest.NewRequest(http.MethodPost, "/sandboxes", strings.NewReader(tc.body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-API-Key", tc.key)
		if _, err := s.Check(req, ok); err == nil {
			t.Errorf("%s: the spec accepted %s", name, tc.body)
		}
	}
	req := httptest.NewRequest(http.MethodPost, "/sandboxes", strings.NewReader(`{"templateID":"base"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-API-Key", "k")
	if _, err := s.Check(req, ok); err != nil {
		t.Errorf("the control request is refused: %v", err)
	}
}
