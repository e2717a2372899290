package address

import (
	"errors"
	"testing"
)

// TestNameByteTable checks the name table against the rule, written here
// independently, for every byte in the first and in a later position.
func TestNameByteTable(t *testing.T) {
	for c := range 256 {
		alnum := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
		punct := c == '.' || c == '_' || c == '-'
		first := string([]byte{byte(c)})
		later := string([]byte{'a', byte(c)})
		if got := checkName("namespace", first) == nil; got != alnum {
			t.Errorf("checkName(%q) accepted = %v, want %v", first, got, alnum)
		}
		if got := checkName("namespace", later) == nil; got != (alnum || punct) {
			t.Errorf("checkName(%q) accepted = %v, want %v", later, got, alnum || punct)
		}
		if err := checkName("namespace", later); err != nil && !errors.Is(err, CodeBindingInvalid) {
			t.Errorf("checkName(%q) = %v, want %s", later, err, CodeBindingInvalid)
		}
	}
}
