package suitetest_test

import (
	"fmt"
	"testing"

	"github.com/checkfu/checkfu/internal/suitetest"
)

// checkPositive is a toy suite, written against a type parameter as the
// module's suites are, so that it runs under a *testing.T and a Recorder.
func checkPositive[T testing.TB](t T, f func(int) int) {
	suitetest.Run(t, "Positive", func(t T) {
		if f(1) <= 0 {
			t.Fatalf("f(1) = %d, want > 0", f(1))
		}
	})
}

// Record runs a suite against a broken implementation without failing
// the test that runs it; Rejects wraps it for a suite's own tests.
func ExampleRecord() {
	res := suitetest.Record(nil, "negate", func(r *suitetest.Recorder) {
		checkPositive(r, func(n int) int { return -n })
	})
	fmt.Println(res.Failed)
	fmt.Println(res)
	// Output:
	// true
	// negate/Positive: f(1) = -1, want > 0
}
