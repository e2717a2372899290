package acp

import (
	"bytes"
	"io"
	"testing"
)

// TestPendingPermissionBytesDefault: a zero MaxPendingPermissionBytes
// means the documented default, never "unlimited"; a set one is used.
// (Filling the 16 MiB default through a client takes many seconds under
// -race; TestPendingPermissionBytesAreBounded checks the bound itself.)
func TestPendingPermissionBytesDefault(t *testing.T) {
	for _, tt := range []struct{ set, want int }{{0, DefaultMaxPendingPermissionBytes}, {-1, DefaultMaxPendingPermissionBytes}, {5, 5}} {
		c := NewClient(bytes.NewReader(nil), io.Discard, Config{MaxPendingPermissionBytes: tt.set})
		<-c.Done()
		if got := c.maxPermissionBytes(); got != tt.want {
			t.Errorf("MaxPendingPermissionBytes %d: bound %d, want %d", tt.set, got, tt.want)
		}
	}
}
