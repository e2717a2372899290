package egress

import "fmt"

func fmtQ(s string) string { return fmt.Sprintf("%q", s) }
