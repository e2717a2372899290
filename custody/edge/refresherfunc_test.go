package edge_test

import (
	"context"
	"errors"
	"testing"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/custody"
	"github.com/checkfu/checkfu/custody/address"
	"github.com/checkfu/checkfu/custody/edge"
)

// TestNilRefresherFuncRefuses: a nil RefresherFunc, alone or as a
// TokenRuntime's Refresher, refuses the refresh, typed, rather than
// panicking.
func TestNilRefresherFuncRefuses(t *testing.T) {
	var f edge.RefresherFunc
	if _, _, _, err := f.Refresh(context.Background(), custody.Binding{}, nil); !errors.Is(err, checkfu.CodeConfigInvalid) {
		t.Fatalf("a nil RefresherFunc's Refresh = %v, want %s", err, checkfu.CodeConfigInvalid)
	}
	rt, err := edge.NewTokenRuntime(edge.TokenRuntimeConfig{Keys: custody.GenerateKeyset(), Store: custody.NewMemoryStore(), Refresher: f})
	if err != nil {
		t.Fatal(err)
	}
	b := custody.Binding{Namespace: "acme", Integration: "github", Handle: address.MustParseHandle("ch_aaaaaaaaaaaaaaaaaaaaaaaaaa")}
	if err := rt.Enroll(context.Background(), b, custody.NewSecret([]byte("refresh-token"))); err != nil {
		t.Fatal(err)
	}
	if s, err := rt.Open(context.Background(), b); !errors.Is(err, checkfu.CodeConfigInvalid) {
		t.Fatalf("Open through a nil RefresherFunc = %v, %v; want %s", s, err, checkfu.CodeConfigInvalid)
	}
}
