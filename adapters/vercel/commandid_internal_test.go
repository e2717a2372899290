package vercel

import (
	"errors"
	"strings"
	"testing"

	"github.com/checkfu/checkfu/adapters/internal/vendorkit"
)

// TestCommandIDIsAVendorID checks that the command ID the stream's first
// line names passes the one vendor-ID check: it is spliced into the kill
// request's path and comes back decoded in that request's errors, so a
// control character or an unbounded length in it is refused.
func TestCommandIDIsAVendorID(t *testing.T) {
	id := func(s string) map[string]any { return map[string]any{"command": map[string]any{"id": s}} }
	for _, bad := range []string{"cmd\x1b]0;owned\x07", "cmd\u202e1", "cmd 1", "u@h", strings.Repeat("c", vendorkit.MaxVendorID+1)} {
		if _, err := commandID(id(bad)); !errors.Is(err, CodeCommandStreamInvalid) {
			t.Errorf("commandID(%q) = %v, want command_stream_invalid", bad, err)
		}
	}
	longest := strings.Repeat("c", vendorkit.MaxVendorID)
	if got, err := commandID(id(longest)); err != nil || got != longest {
		t.Errorf("commandID of %d bytes = %q, %v", vendorkit.MaxVendorID, got, err)
	}
}
