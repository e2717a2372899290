package vendortest

import (
	"encoding/base64"
	"testing"
)

func TestByteFormat(t *testing.T) {
	raw := []byte{0xfb, 0xff, 0x00, 'a', 0xfe}
	for _, ok := range []string{
		"",
		base64.StdEncoding.EncodeToString(raw),
		base64.URLEncoding.EncodeToString(raw),
		base64.RawStdEncoding.EncodeToString(raw),
		base64.RawURLEncoding.EncodeToString(raw),
	} {
		if err := (byteFormat{}).Validate(ok); err != nil {
			t.Errorf("Validate(%q) = %v, want nil", ok, err)
		}
	}
	// kin-openapi's own regular expression accepts each of these.
	for _, bad := range []string{"a", "ab=c", "+/-_", "abc==="} {
		if err := (byteFormat{}).Validate(bad); err == nil {
			t.Errorf("Validate(%q) = nil, want an error", bad)
		}
	}
	for _, bad := range []string{"ab c", "ab\t", "é"} {
		if err := (byteFormat{}).Validate(bad); err == nil {
			t.Errorf("Validate(%q) = nil, want an error", bad)
		}
	}
}
