package vendorkit_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/adapters/internal/vendorkit"
)

func TestCheckBaseURL(t *testing.T) {
	for s, want := range map[string]string{
		"https://api.example":     "",
		"http://127.0.0.1:8080":   "",
		"http://api.example":      `refused: config_invalid: acme: "http://api.example" is not https`,
		"https://u:p@api.example": `refused: config_invalid: acme: "https://u:p@api.example" is not a base URL`,
	} {
		err := vendorkit.CheckBaseURL("acme", s)
		if want == "" {
			if err != nil {
				t.Errorf("CheckBaseURL(%q) = %v, want nil", s, err)
			}
			continue
		}
		if !errors.Is(err, checkfu.CodeConfigInvalid) || err.Error() != want {
			t.Errorf("CheckBaseURL(%q) = %v, want %s", s, err, want)
		}
	}
}

func TestPathSafeID(t *testing.T) {
	longest := strings.Repeat("a", vendorkit.MaxVendorID)
	for _, c := range []struct {
		id, extra string
		want      bool
	}{
		{"sbx-1", "", true},
		{"sbx.1", "", true},
		{longest, "", true},
		{longest + "a", "", false},
		{"", "", false},
		{"sbx.1", ".", false},
		{"sbx-1", ".", true},
		{"a/b", "", false},
		{"a?b", "", false},
		{"a#b", "", false},
		{"a%2Fb", "", false},
		{"u@h", "", false},
		{"h:1", "", false},
		{"a b", "", false},
	} {
		if got := vendorkit.PathSafeID(c.id, c.extra); got != c.want {
			t.Errorf("PathSafeID(%q, %q) = %v, want %v", c.id, c.extra, got, c.want)
		}
	}
}

// TestPathSafeIDIsPrintable checks that a vendor's name holding a byte
// outside printable ASCII is refused: it would come back decoded in a
// request's path and reach an error or evidence raw.
func TestPathSafeIDIsPrintable(t *testing.T) {
	for _, id := range []string{"a\x1b[2J", "a\x07", "a\x00", "a\tb", "a\x7f", "a\u202eb", "caf\xc3\xa9", "\xff"} {
		if vendorkit.PathSafeID(id, "") {
			t.Errorf("PathSafeID(%q) = true, want false", id)
		}
	}
	if !vendorkit.PathSafeID("!~-_.Az09", "") {
		t.Error("PathSafeID refused the printable ASCII edges")
	}
}

// TestPublicHost: a host a vendor's answer names is public only if its
// address literal is public or it is a DNS name that no resolver reads
// as an address or as loopback.
func TestPublicHost(t *testing.T) {
	for h, want := range map[string]bool{
		"proxy.app.daytona.io":  true,
		"PROXY.App.Daytona.IO":  true,
		"proxy.example.":        true,
		"xn--bcher-kva.example": true,
		"203.0.113.5":           false, // documentation range
		"8.8.8.8":               true,
		"2606:4700::1111":       true,
		"127.0.0.1":             false,
		"127.0.0.2":             false,
		"::1":                   false,
		"::ffff:127.0.0.1":      false,
		"10.0.0.1":              false,
		"169.254.169.254":       false,
		"fe80::1%eth0":          false,
		"0.0.0.0":               false,
		"localhost":             false,
		"LOCALHOST.":            false,
		"proxy.localhost":       false,
		"127.1":                 false,
		"2130706433":            false,
		"0x7f000001":            false,
		"0x7f.0.0.1":            false,
		"proxy.example.1":       false,
		"":                      false,
		".":                     false,
		"proxy_1.example":       false,
		"bücher.example":        false,
		"a b.example":           false,
	} {
		if got := vendorkit.PublicHost(h); got != want {
			t.Errorf("PublicHost(%q) = %v, want %v", h, got, want)
		}
	}
}
