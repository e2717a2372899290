package acp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/checkfu/checkfu/acp"
)

// A hostile agent floods the client with permission requests while the
// Runner's handler waits for a user. Each would hold a goroutine and a
// prompt for as long as the user takes: the client must bound how many
// reach OnPermission at once and deny the rest itself, at once.
//
// Mutant: deleting the maxPendingPermissions check in startPermission
// makes TestPermissionFloodIsBounded fail.
func TestPermissionFloodIsBounded(t *testing.T) {
	const flood = 4 * acp.MaxPendingPermissions
	var inFlight atomic.Int64
	over := make(chan struct{})
	var overOnce sync.Once
	c, a, _ := newRawClient(t, acp.Config{
		OnPermission: func(ctx context.Context, req acp.RequestPermissionRequest) acp.PermissionOutcome {
			if inFlight.Add(1) > acp.MaxPendingPermissions {
				overOnce.Do(func() { close(over) })
			}
			defer inFlight.Add(-1)
			<-ctx.Done() // a user who never answers
			return acp.Select("yes")
		},
	})
	a.initialize(c)
	var batch []string
	for i := range flood {
		batch = append(batch, fmt.Sprintf(`{"jsonrpc":"2.0","id":"p%d","method":"session/request_permission","params":{"sessionId":"s","toolCall":{"toolCallId":"c%d"},"options":[{"optionId":"yes","name":"Yes","kind":"allow_once"},{"optionId":"no","name":"No","kind":"reject_once"}]}}`, i, i))
	}
	a.send("[" + strings.Join(batch, ",") + "]")
	for range flood - acp.MaxPendingPermissions {
		var m acp.Message
		select {
		case <-over:
			t.Fatalf("more than %d permission requests reached OnPermission at once", acp.MaxPendingPermissions)
		case m = <-a.lines:
		}
		var res acp.RequestPermissionResponse
		if err := json.Unmarshal(m.Result, &res); err != nil {
			t.Fatalf("answer %s: %v", m.Result, err)
		}
		if res.Outcome != acp.Select("no") {
			t.Fatalf("an excess permission request was answered %+v, want the deny default", res.Outcome)
		}
	}
	if n := inFlight.Load(); n > acp.MaxPendingPermissions {
		t.Fatalf("%d permission requests in OnPermission, want at most %d", n, acp.MaxPendingPermissions)
	}
}
