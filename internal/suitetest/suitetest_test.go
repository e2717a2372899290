package suitetest

import (
	"os"
	"strings"
	"sync"
	"testing"
)

func TestRecorderRecordsWithoutFailing(t *testing.T) {
	var dir string
	var order []string
	res := Record(t, "outer", func(r *Recorder) {
		r.Cleanup(func() { order = append(order, "first") })
		r.Cleanup(func() { order = append(order, "second") })
		dir = r.TempDir()
		r.Errorf("one %d", 1)
		Run(r, "sub", func(s *Recorder) {
			s.Fatal("two")
			t.Error("Fatal did not end the subtest")
		})
		Run(r, "skipped", func(s *Recorder) { s.Skip("why") })
		var wg sync.WaitGroup
		wg.Go(func() { r.Fatalf("three") })
		wg.Wait()
		r.FailNow()
		t.Error("FailNow did not end the function")
	})
	if !res.Failed || res.Skipped {
		t.Fatalf("Result = %+v, want failed, not skipped", res)
	}
	want := "outer: one 1\nouter/sub: two\nouter: three"
	if got := res.String(); got != want {
		t.Errorf("errors =\n%s\nwant\n%s", got, want)
	}
	if strings.Join(order, ",") != "second,first" {
		t.Errorf("cleanups ran %v, want last in first out", order)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("TempDir %s survives the recorder: %v", dir, err)
	}
}

func TestRecorderPassAndSkip(t *testing.T) {
	if res := Record(t, "pass", func(r *Recorder) { r.Log("fine") }); res.Failed || res.Skipped || len(res.Logs) != 1 {
		t.Errorf("passing function recorded %+v", res)
	}
	if res := Record(t, "skip", func(r *Recorder) { r.SkipNow() }); res.Failed || !res.Skipped {
		t.Errorf("skipped function recorded %+v", res)
	}
	if res := Record(t, "panic", func(r *Recorder) { panic("boom") }); !res.Failed {
		t.Errorf("panicking function recorded %+v", res)
	}
}

// suite is a toy suite written against a type parameter, as the real ones are.
func suite[T testing.TB](t T, ok bool) {
	Run(t, "Check", func(t T) {
		if !ok {
			t.Fatal("broken")
		}
	})
}

func TestRunServesBoth(t *testing.T) {
	suite(t, true)
	Rejects(t, "broken toy", func(r *Recorder) { suite(r, false) })
	Accepts(t, "correct toy", func(r *Recorder) { suite(r, true) })
	var tb testing.TB = t
	suite(tb, true)
}
