package edge_test

import (
	"testing"

	"github.com/checkfu/checkfu/custody/edge"
	"github.com/checkfu/checkfu/internal/copytest"
)

// TestRemoteHeadersIsACopy: what RemoteHeaders returns is the caller's
// own; writing over it leaves the next call's answer, and so the
// headers the edge allows a remote session, unchanged.
func TestRemoteHeadersIsACopy(t *testing.T) {
	copytest.Fresh(t, "RemoteHeaders", edge.RemoteHeaders, "Authorization")
}
