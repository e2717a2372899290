package proptest_test

import (
	"fmt"
	"net/http"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/egress"
	"github.com/checkfu/checkfu/examples/proptest"
)

// A Connection allows every path of any name under example.com; the
// platform blocks tracker.example.com and everything under it.
func ExampleNew() {
	rules, err := egress.NewRules([]egress.Rule{{Host: "*.example.com", Port: 443, PathPrefix: "/", Methods: []string{"GET"}}})
	if err != nil {
		panic(err)
	}
	p := proptest.New(rules, "tracker.example.com")
	for _, u := range []string{"https://api.example.com/v1", "https://tracker.example.com/pixel", "https://eu.tracker.example.com/pixel"} {
		hr, _ := http.NewRequest("GET", u, nil)
		req, err := egress.CanonicalRequest(hr)
		if err != nil {
			panic(err)
		}
		d, err := p.Decide(&req)
		if code, ok := checkfu.CodeOf(err); ok {
			fmt.Println(u, d, code)
			continue
		}
		fmt.Println(u, d)
	}
	// Output:
	// https://api.example.com/v1 allow(rule 0)
	// https://tracker.example.com/pixel deny host_blocked
	// https://eu.tracker.example.com/pixel deny host_blocked
}
