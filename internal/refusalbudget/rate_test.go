package refusalbudget_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/checkfu/checkfu/internal/refusalbudget"
)

// TestRateBurstThenPace: a full Rate lets exactly perSecond events pass
// at once, then one per 1/perSecond, and never more than perSecond in a
// second however the events arrive.
func TestRateBurstThenPace(t *testing.T) {
	const perSecond = 16
	r := refusalbudget.NewRate(perSecond)
	t0 := time.Unix(1_700_000_000, 0)
	passed := 0
	for range 100 {
		if _, ok := r.Allow(t0); ok {
			passed++
		}
	}
	if passed != perSecond {
		t.Fatalf("a full Rate let %d of 100 events pass at once, want %d", passed, perSecond)
	}
	step := time.Second / perSecond
	if _, ok := r.Allow(t0.Add(step - time.Millisecond)); ok {
		t.Fatalf("an event passed %v after the burst, before a token was back", step-time.Millisecond)
	}
	if _, ok := r.Allow(t0.Add(step)); !ok {
		t.Fatalf("no event passed %v after the burst, when a token was back", step)
	}
	// Over ten seconds of events every millisecond, at most the burst
	// plus perSecond a second pass.
	passed = 0
	for ms := range 10_000 {
		if _, ok := r.Allow(t0.Add(step + time.Duration(ms+1)*time.Millisecond)); ok {
			passed++
		}
	}
	if most := 10*perSecond + 1; passed > most || passed < 10*perSecond-1 {
		t.Fatalf("%d events passed in 10 s, want about %d and at most %d", passed, 10*perSecond, most)
	}
}

// TestRateReportsWhatItHeld: the event let pass after some were held
// learns how many, and the count starts again.
func TestRateReportsWhatItHeld(t *testing.T) {
	r := refusalbudget.NewRate(1)
	t0 := time.Unix(1_700_000_000, 0)
	if held, ok := r.Allow(t0); !ok || held != 0 {
		t.Fatalf("first Allow = %d, %v; want 0, true", held, ok)
	}
	for range 5 {
		if _, ok := r.Allow(t0); ok {
			t.Fatal("an event passed with no token")
		}
	}
	if held, ok := r.Allow(t0.Add(time.Second)); !ok || held != 5 {
		t.Fatalf("Allow after 5 held = %d, %v; want 5, true", held, ok)
	}
	if held, ok := r.Allow(t0.Add(2 * time.Second)); !ok || held != 0 {
		t.Fatalf("the next Allow = %d, %v; want 0, true (the count starts again)", held, ok)
	}
}

// TestRateConcurrent: events racing on one Rate pass at most the burst,
// and every one is either let pass or held.
func TestRateConcurrent(t *testing.T) {
	r := refusalbudget.NewRate(8)
	now := time.Unix(1_700_000_000, 0)
	var mu sync.Mutex
	passed, held := 0, int64(0)
	var wg sync.WaitGroup
	for range 64 {
		wg.Go(func() {
			_, ok := r.Allow(now)
			mu.Lock()
			defer mu.Unlock()
			if ok {
				passed++
			}
		})
	}
	wg.Wait()
	h, ok := r.Allow(now.Add(time.Second))
	held = h
	if passed != 8 || !ok || held != 56 {
		t.Fatalf("64 racing events: %d passed, then %d held (%v); want 8 and 56", passed, held, ok)
	}
}

func TestNilRateLetsNothingPass(t *testing.T) {
	var r *refusalbudget.Rate
	if held, ok := r.Allow(time.Now()); ok || held != 0 {
		t.Fatalf("nil Rate Allow = %d, %v; want 0, false", held, ok)
	}
}

func ExampleRate() {
	r := refusalbudget.NewRate(2)
	t0 := time.Unix(1_700_000_000, 0)
	for i, at := range []time.Duration{0, 0, 0, 0, time.Second} {
		held, ok := r.Allow(t0.Add(at))
		fmt.Println(i, ok, held)
	}
	// Output:
	// 0 true 0
	// 1 true 0
	// 2 false 0
	// 3 false 0
	// 4 true 2
}
