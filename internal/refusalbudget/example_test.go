package refusalbudget_test

import (
	"context"
	"fmt"

	"github.com/checkfu/checkfu/internal/refusalbudget"
)

func ExampleBudget() {
	b := refusalbudget.New(2, 16)
	for i := range 3 {
		if err := b.Pace(context.Background()); err != nil {
			fmt.Println(i, err)
			continue
		}
		ok, last := b.Spend()
		fmt.Println(i, ok, last)
	}
	// Output:
	// 0 true false
	// 1 true true
	// 2 refusalbudget: the refusal budget is spent
}
