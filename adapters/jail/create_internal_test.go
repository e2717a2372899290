//go:build linux

package jail

import (
	"context"
	"testing"
	"time"

	"github.com/checkfu/checkfu/adapters"
)

// testCreateTimeout bounds a test's Create, and the Destroy that
// releases its instance when the test ends.
const testCreateTimeout = 30 * time.Second

// CreateForTest is p.Create, or p.CreateWithBroker when broker is not
// "", whose instance, when there is one, is destroyed when t ends, on
// every path: a test that fails or stops between Create and its own
// Destroy leaves no workspace mounted, no cgroup and no guard running.
// Destroy runs once, so a test's own Destroy makes this one do nothing.
// Every test of the package that makes an instance makes it here.
func CreateForTest(t testing.TB, p *Provider, spec adapters.InstanceSpec, broker string) (adapters.Instance, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testCreateTimeout)
	defer cancel()
	var inst adapters.Instance
	var err error
	if broker == "" {
		inst, err = p.Create(ctx, spec)
	} else {
		inst, err = p.CreateWithBroker(ctx, spec, broker)
	}
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), testCreateTimeout)
		defer cancel()
		if err := inst.Destroy(ctx); err != nil {
			t.Errorf("Destroy of %s when the test ended: %v", spec.ID, err)
		}
	})
	return inst, nil
}
