package egress_test

import (
	"net/netip"
	"testing"

	"github.com/checkfu/checkfu/egress"
	"pgregory.net/rapid"
)

// isPublicTests holds, for every row of the classification tables, the
// address just outside each end (when one exists) and the address at each
// end just inside, plus the embedding and zone cases.
var isPublicTests = []struct {
	addr string
	want bool
}{
	// 0.0.0.0/8
	{"0.0.0.0", false}, {"0.255.255.255", false}, {"1.0.0.0", true},
	// 10.0.0.0/8
	{"9.255.255.255", true}, {"10.0.0.0", false}, {"10.255.255.255", false}, {"11.0.0.0", true},
	// 100.64.0.0/10
	{"100.63.255.255", true}, {"100.64.0.0", false}, {"100.127.255.255", false}, {"100.128.0.0", true},
	// 127.0.0.0/8
	{"126.255.255.255", true}, {"127.0.0.0", false}, {"127.255.255.255", false}, {"128.0.0.0", true},
	// 169.254.0.0/16
	{"169.253.255.255", true}, {"169.254.0.0", false}, {"169.254.169.254", false}, {"169.254.255.255", false}, {"169.255.0.0", true},
	// 172.16.0.0/12
	{"172.15.255.255", true}, {"172.16.0.0", false}, {"172.31.255.255", false}, {"172.32.0.0", true},
	// 192.0.0.0/24
	{"191.255.255.255", true}, {"192.0.0.0", false}, {"192.0.0.9", false}, {"192.0.0.10", false}, {"192.0.0.192", false}, {"192.0.0.255", false}, {"192.0.1.0", true},
	// 192.0.2.0/24
	{"192.0.1.255", true}, {"192.0.2.0", false}, {"192.0.2.255", false}, {"192.0.3.0", true},
	// 192.31.196.0/24
	{"192.31.195.255", true}, {"192.31.196.0", false}, {"192.31.196.255", false}, {"192.31.197.0", true},
	// 192.52.193.0/24
	{"192.52.192.255", true}, {"192.52.193.0", false}, {"192.52.193.255", false}, {"192.52.194.0", true},
	// 192.88.99.0/24
	{"192.88.98.255", true}, {"192.88.99.0", false}, {"192.88.99.255", false}, {"192.88.100.0", true},
	// 192.168.0.0/16
	{"192.167.255.255", true}, {"192.168.0.0", false}, {"192.168.255.255", false}, {"192.169.0.0", true},
	// 192.175.48.0/24
	{"192.175.47.255", true}, {"192.175.48.0", false}, {"192.175.48.255", false}, {"192.175.49.0", true},
	// 198.18.0.0/15
	{"198.17.255.255", true}, {"198.18.0.0", false}, {"198.19.255.255", false}, {"198.20.0.0", true},
	// 198.51.100.0/24
	{"198.51.99.255", true}, {"198.51.100.0", false}, {"198.51.100.255", false}, {"198.51.101.0", true},
	// 203.0.113.0/24
	{"203.0.112.255", true}, {"203.0.113.0", false}, {"203.0.113.255", false}, {"203.0.114.0", true},
	// 224.0.0.0/4 and 240.0.0.0/4
	{"223.255.255.255", true}, {"224.0.0.0", false}, {"239.255.255.255", false},
	{"240.0.0.0", false}, {"255.255.255.255", false},
	// ordinary public IPv4
	{"8.8.8.8", true}, {"1.1.1.1", true},

	// 2000::/3, the positive check
	{"1fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", false}, {"2000::", true},
	{"3fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", true}, {"4000::", false},
	// 2001::/23
	{"2000:ffff:ffff:ffff:ffff:ffff:ffff:ffff", true}, {"2001::", false},
	{"2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff", false}, {"2001:200::", true},
	// 2001:db8::/32
	{"2001:db7:ffff:ffff:ffff:ffff:ffff:ffff", true}, {"2001:db8::", false},
	{"2001:db8:ffff:ffff:ffff:ffff:ffff:ffff", false}, {"2001:db9::", true},
	// 2002::/16
	{"2001:ffff:ffff:ffff:ffff:ffff:ffff:ffff", true}, {"2002::", false},
	{"2002:ffff:ffff:ffff:ffff:ffff:ffff:ffff", false}, {"2003::", true},
	// 2620:4f:8000::/48
	{"2620:4f:7fff:ffff:ffff:ffff:ffff:ffff", true}, {"2620:4f:8000::", false},
	{"2620:4f:8000:ffff:ffff:ffff:ffff:ffff", false}, {"2620:4f:8001::", true},
	// 3fff::/20
	{"3ffe:ffff:ffff:ffff:ffff:ffff:ffff:ffff", true}, {"3fff::", false},
	{"3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff", false}, {"3fff:1000::", true},
	// outside 2000::/3
	{"::", false}, {"::1", false}, {"fc00::", false}, {"fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", false},
	{"fe80::1", false}, {"fec0::1", false}, {"ff02::1", false}, {"100::1", false}, {"5f00::1", false},
	// addresses that embed IPv4
	{"::ffff:8.8.8.8", true},    // mapped: judged as 8.8.8.8
	{"::ffff:127.0.0.1", false}, // mapped loopback
	{"::ffff:169.254.169.254", false},
	{"::8.8.8.8", false}, // IPv4-compatible
	{"::127.0.0.1", false},
	{"64:ff9b::808:808", false},                     // NAT64 of 8.8.8.8
	{"64:ff9b::7f00:1", false},                      // NAT64 of 127.0.0.1
	{"64:ff9b:1::1", false},                         // local-use NAT64
	{"2001:0:4136:e378:8000:63bf:3fff:fdd2", false}, // Teredo
	{"2002:808:808::1", false},                      // 6to4 of 8.8.8.8
	// ordinary public IPv6
	{"2606:4700:4700::1111", true},
	// zones are refused, whatever the address
	{"fe80::1%eth0", false}, {"2606:4700:4700::1111%eth0", false}, {"::ffff:8.8.8.8%eth0", false},
}

func TestIsPublic(t *testing.T) {
	for _, tt := range isPublicTests {
		a, err := netip.ParseAddr(tt.addr)
		if err != nil {
			t.Fatalf("bad test address %q: %v", tt.addr, err)
		}
		if got := egress.IsPublic(a); got != tt.want {
			t.Errorf("IsPublic(%v) = %v, want %v", tt.addr, got, tt.want)
		}
	}
	if egress.IsPublic(netip.Addr{}) {
		t.Errorf("IsPublic(zero Addr) = true, want false")
	}
}

func TestIsPublicAllocates0(t *testing.T) {
	a := netip.MustParseAddr("2606:4700:4700::1111")
	if n := testing.AllocsPerRun(100, func() { egress.IsPublic(a) }); n != 0 {
		t.Errorf("IsPublic allocates %v times, want 0", n)
	}
}

// TestIsPublicProperties checks invariants over random addresses: a mapped
// address is judged as the IPv4 address it carries, every IPv6 address
// outside 2000::/3 is refused, and so is every zoned address.
func TestIsPublicProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		b4 := rapid.SliceOfN(rapid.Byte(), 4, 4).Draw(t, "v4")
		v4 := netip.AddrFrom4([4]byte(b4))
		mapped := netip.AddrFrom16(v4.As16())
		if egress.IsPublic(v4) != egress.IsPublic(mapped) {
			t.Fatalf("IsPublic(%v) != IsPublic(%v)", v4, mapped)
		}
		b16 := rapid.SliceOfN(rapid.Byte(), 16, 16).Draw(t, "v6")
		v6 := netip.AddrFrom16([16]byte(b16))
		if v6.Is4In6() {
			return
		}
		if b16[0]&0xe0 != 0x20 && egress.IsPublic(v6) {
			t.Fatalf("IsPublic(%v) = true outside 2000::/3", v6)
		}
		if egress.IsPublic(v6.WithZone("eth0")) {
			t.Fatalf("IsPublic(%v%%eth0) = true for a zoned address", v6)
		}
	})
}
