package puretest_test

import (
	"fmt"

	"github.com/checkfu/checkfu/internal/puretest"
)

// Impure reports the planted read.go; load.go is excepted.
func ExampleImpure() {
	found, read, err := puretest.Impure([]string{"testdata/impure"}, "load.go")
	fmt.Println(found, read, err)
	// Output: [testdata/impure/read.go imports "os"] 2 <nil>
}
