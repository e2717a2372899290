// Command schemata is the fixture for the schemata tests: each function
// or variable below is edited by one of TestSchemata's mutants, and main
// prints what each returns.
package main

import (
	"fmt"
	"strings"
)

type box struct{ n int }

func (box) kind() string { return "box" }

func (b *box) add(_ int, more ...int) int {
	s := b.n
	for _, m := range more {
		s += m
	}
	return s
}

func join(sep string, parts ...string) string { return strings.Join(parts, sep) }

func first[T any](xs []T) T { return xs[0] }

func record(out *[]string) { *out = append(*out, "orig") }

func count() int {
	n := 0
outer:
	for i := 0; i < 3; i++ {
		for j := 0; j < 3; j++ {
			if j == 1 {
				continue outer
			}
			n++
		}
	}
	return n
}

func split(x int) (r int, err error) {
	r, err = x, nil
	return
}

func ints(int, int) int { return 1 }

var table = []string{"a", "b", "c"}

var fixed = [...]string{"p", "q"}

const limit = 3

func main() {
	var out []string
	record(&out)
	b := &box{n: 1}
	r, _ := split(5)
	fmt.Println(box{}.kind(), b.add(0, 2, 3), join("-", "x", "y"), first([]int{7, 8}), out, count(), r, ints(1, 2), table, fixed, limit)
}
