package pipeline_test

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/custody/authz"
	"github.com/checkfu/checkfu/custody/pipeline"
)

// TestOneLookupPerCall: the pipeline looks a call's capability up in
// the registry once, and carries what it found through the checks: an
// allowed call, an allowed external effect, the dry run and a refused
// call each make exactly one lookup.
func TestOneLookupPerCall(t *testing.T) {
	r := newRig(t, 10)
	var n atomic.Int64
	pipeline.CountLookups(r.p, &n)
	ctx := context.Background()
	steps := []struct {
		name string
		run  func() error
		code checkfu.Code
	}{
		{"an allowed read_only call", func() error {
			_, err := r.ch.Call(ctx, "issues.list", json.RawMessage(`{}`))
			return err
		}, ""},
		{"the dry run", func() error {
			_, err := r.ch.Plan("issues.create", json.RawMessage(createArgs))
			return err
		}, ""},
		{"an allowed external effect", func() error {
			_, err := r.ch.Call(ctx, "issues.create", json.RawMessage(createArgs))
			return err
		}, ""},
		{"a call refused its arguments", func() error {
			_, err := r.ch.Call(ctx, "issues.create", json.RawMessage(`{}`))
			return err
		}, authz.CodeArgumentsInvalid},
		{"a call of no registration", func() error {
			_, err := r.ch.Call(ctx, "issues.delete", json.RawMessage(`{}`))
			return err
		}, authz.CodePermissionMissing},
	}
	for _, s := range steps {
		if s.name == "an allowed external effect" {
			r.approve(createArgs, time.Minute)
		}
		n.Store(0)
		err := s.run()
		if s.code == "" && err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if s.code != "" {
			wantCode(t, err, s.code)
		}
		if got := n.Load(); got != 1 {
			t.Errorf("%s: %d registry lookups, want 1", s.name, got)
		}
	}
	if r.edge.Sent() != 2 {
		t.Errorf("the edge was handed %d calls, want the 2 allowed", r.edge.Sent())
	}
}
