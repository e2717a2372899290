package refusalbudget_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/checkfu/checkfu/internal/refusalbudget"
)

// fakeClock is a clock that moves only when the budget waits.
type fakeClock struct {
	t      time.Time
	waited []time.Duration
}

func (c *fakeClock) now() time.Time { return c.t }
func (c *fakeClock) sleep(_ context.Context, d time.Duration) error {
	c.waited = append(c.waited, d)
	c.t = c.t.Add(d)
	return nil
}

func newBudget(max, perSecond int) (*refusalbudget.Budget, *fakeClock) {
	c := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	b := refusalbudget.New(max, perSecond)
	b.SetClock(c.now, c.sleep)
	return b, c
}

func TestBurstThenRate(t *testing.T) {
	b, c := newBudget(100, 4)
	for i := range 4 {
		if err := b.Pace(context.Background()); err != nil {
			t.Fatalf("Pace %d = %v, want nil", i, err)
		}
		b.Spend()
	}
	if len(c.waited) != 0 {
		t.Fatalf("the burst of 4 waited %v, want no wait", c.waited)
	}
	if err := b.Pace(context.Background()); err != nil {
		t.Fatalf("Pace after the burst = %v, want nil", err)
	}
	var total time.Duration
	for _, d := range c.waited {
		total += d
	}
	if want := time.Second / 4; total != want {
		t.Fatalf("the fifth refusal waited %v, want %v", total, want)
	}
}

func TestSpendStopsAtMax(t *testing.T) {
	b, _ := newBudget(3, 100)
	var lasts int
	for i := range 3 {
		ok, last := b.Spend()
		if !ok {
			t.Fatalf("Spend %d: ok = false, want true", i)
		}
		if last {
			lasts++
			if i != 2 {
				t.Fatalf("Spend %d reported the last unit, want only the third", i)
			}
		}
		if i < 2 && b.Exhausted() {
			t.Fatalf("Exhausted after %d of 3", i+1)
		}
	}
	if lasts != 1 {
		t.Fatalf("%d Spends reported the last unit, want 1", lasts)
	}
	if ok, last := b.Spend(); ok || last {
		t.Fatalf("Spend past the budget = (%v, %v), want (false, false)", ok, last)
	}
	if !b.Exhausted() {
		t.Fatal("Exhausted = false once spent")
	}
	select {
	case <-b.Done():
	default:
		t.Fatal("Done is open once spent")
	}
	if err := b.Pace(context.Background()); !errors.Is(err, refusalbudget.ErrSpent) {
		t.Fatalf("Pace once spent = %v, want ErrSpent", err)
	}
}

func TestPaceEndsWithItsContext(t *testing.T) {
	b := refusalbudget.New(10, 1)
	b.Spend()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := b.Pace(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Pace with an ended context = %v, want context.Canceled", err)
	}
}
