package edge_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/custody"
	"github.com/checkfu/checkfu/custody/address"
	"github.com/checkfu/checkfu/custody/authz"
)

type govClock struct {
	mu sync.Mutex
	t  time.Time
}

func newGovClock() *govClock { return &govClock{t: time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)} }

func (c *govClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *govClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

var govCred = custody.Binding{Namespace: "acme", Integration: "github", Handle: address.MustParseHandle("ch_aaaaaaaaaaaaaaaaaaaaaaaaaa")}

var (
	govProvider = checkfu.ProviderRevision{Provider: "checkfu:github", Revision: "3"}
	govScope    = authz.LeaseScope{Service: "runner", Gateway: "gateway-a", Actor: "alice"}
)

const govIssueSchema = `{
	"type": "object",
	"properties": {"title": {"type": "string", "maxLength": 64}, "body": {"type": "string"}},
	"required": ["title"],
	"additionalProperties": false
}`

func wantCode(t *testing.T, err error, code checkfu.Code) {
	t.Helper()
	if !errors.Is(err, code) {
		t.Fatalf("err = %v, want code %s", err, code)
	}
}

type failingSink struct{}

func (failingSink) Record(context.Context, authz.Evidence) error { return errors.New("disk full") }
