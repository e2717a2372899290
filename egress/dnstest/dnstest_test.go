package dnstest

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"slices"
	"testing"
)

func resolver(s *Server) *net.Resolver {
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, s.Addr())
	}}
}

func TestServer(t *testing.T) {
	s, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r := resolver(s)
	ctx := context.Background()

	s.Set("both.example.test", netip.MustParseAddr("127.0.0.2"), netip.MustParseAddr("2001:db8::1"))
	got, err := r.LookupNetIP(ctx, "ip", "both.example.test")
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(got, netip.Addr.Compare)
	if want := []netip.Addr{netip.MustParseAddr("127.0.0.2"), netip.MustParseAddr("2001:db8::1")}; !slices.Equal(got, want) {
		t.Errorf("LookupNetIP = %v, want %v", got, want)
	}

	// Rebinding: the answer changes with the query count.
	s.SetFunc("rebind.example.test", func(n int) []netip.Addr {
		if n == 0 {
			return []netip.Addr{netip.MustParseAddr("192.0.2.1")}
		}
		return []netip.Addr{netip.MustParseAddr("127.0.0.2")}
	})
	first, _ := r.LookupNetIP(ctx, "ip4", "rebind.example.test")
	second, _ := r.LookupNetIP(ctx, "ip4", "rebind.example.test")
	if len(first) != 1 || len(second) != 1 || first[0] == second[0] {
		t.Errorf("rebinding answers %v then %v", first, second)
	}

	_, err = r.LookupNetIP(ctx, "ip", "unknown.example.test")
	var dnsErr *net.DNSError
	if !errors.As(err, &dnsErr) || !dnsErr.IsNotFound {
		t.Errorf("unknown name: %v, want not found", err)
	}
	if s.Queries("unknown.example.test") == 0 || s.Queries("never.example.test") != 0 {
		t.Errorf("query counts wrong: %v", s.Log())
	}
}
