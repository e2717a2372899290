package custodytest_test

import (
	"testing"

	"github.com/checkfu/checkfu/custody"
	"github.com/checkfu/checkfu/custody/custodytest"
)

func TestMemoryStore(t *testing.T) {
	custodytest.TestStore(t, func(t *testing.T) custody.Store { return custody.NewMemoryStore() })
}
