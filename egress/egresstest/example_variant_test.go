package egresstest_test

import (
	"fmt"

	"github.com/checkfu/checkfu/egress"
	"github.com/checkfu/checkfu/egress/egresstest"
)

// Variant turns an earlier request into a near-variant of it, for a
// property that asks one stateful decider about many similar requests.
func ExampleVariant() {
	rs, err := egress.NewRules([]egress.Rule{{Host: "api.example.com", Port: 443, PathPrefix: "/v1", Methods: []string{"GET"}}})
	if err != nil {
		panic(err)
	}
	prev := egresstest.Request(rs).Example(1)
	differs := 0
	for seed := range 20 {
		v := egresstest.Variant(rs, prev).Example(seed)
		if v.Method != prev.Method || v.Port != prev.Port || v.Path != prev.Path || v.Host != prev.Host || len(v.Header) != len(prev.Header) || v.Scheme != prev.Scheme {
			differs++
		}
	}
	fmt.Println(differs > 0)
	// Output: true
}
