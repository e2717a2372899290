package dnstest_test

import (
	"context"
	"fmt"
	"net"
	"net/netip"

	"github.com/checkfu/checkfu/egress/dnstest"
)

// A test owns resolution: it starts a server, sets a name, and points a
// resolver (or an egress.DialerConfig's Resolver) at Addr.
func Example() {
	dns, err := dnstest.Start()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer dns.Close()
	dns.Set("api.example.test", netip.MustParseAddr("198.18.0.10"))

	r := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, dns.Addr())
	}}
	addrs, err := r.LookupNetIP(context.Background(), "ip4", "api.example.test.")
	fmt.Println(addrs, err, dns.Queries("api.example.test") > 0)
	// Output: [198.18.0.10] <nil> true
}
