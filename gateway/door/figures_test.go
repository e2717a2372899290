package door_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestModelRouteFigures runs bench/modelroute/figures.awk, which turns
// the rounds of this package's benchmarks into the medians recorded in
// docs/benchmarks, on made-up benchmark lines: each median is the middle
// value by number, not by text ("1100" sorts before "950" as text).
func TestModelRouteFigures(t *testing.T) {
	awk, err := exec.LookPath("awk")
	if err != nil {
		t.Skip("no awk on PATH")
	}
	var in strings.Builder
	for r, v := range []struct{ direct, route, hops, tokenRoute, door string }{
		{"100.0", "95.0", "98.0", "1950000", "12000"},
		{"100.0", "85.0", "99.0", "2100000", "9000"},
		{"100.0", "110.0", "120.0", "2200000", "10000"},
	} {
		in.WriteString("round " + string(rune('1'+r)) + "\n")
		in.WriteString("BenchmarkModelRouteLongStream/direct-2 5 1000 ns/op " + v.direct + " MB/s\n")
		in.WriteString("BenchmarkModelRouteLongStream/hops-2 5 1000 ns/op " + v.hops + " MB/s\n")
		in.WriteString("BenchmarkModelRouteLongStream/route-2 5 1000 ns/op " + v.route + " MB/s\n")
		in.WriteString("BenchmarkModelRouteFirstToken/direct-2 200 1000000 ns/op\n")
		in.WriteString("BenchmarkModelRouteFirstToken/route-2 200 " + v.tokenRoute + " ns/op\n")
		in.WriteString("BenchmarkToolCall/socket-2 2000 10000 ns/op\n")
		in.WriteString("BenchmarkToolCall/door-2 2000 " + v.door + " ns/op\n")
	}
	cmd := exec.Command(awk, "-f", "../../bench/modelroute/figures.awk")
	cmd.Stdin = strings.NewReader(in.String())
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("figures.awk: %v", err)
	}
	for _, want := range []string{
		"| first token added (us) | 1100 | 950, 1100, 1200 |",
		"| tool call door/socket | 1.00 | 1.20, 0.90, 1.00 |",
		"| route/direct | 0.95 | 0.95, 0.85, 1.10 |",
		"| route MB/s | 95.00 | 95.0, 85.0, 110.0 |",
	} {
		if !strings.Contains(string(out), want+"\n") {
			t.Errorf("figures.awk printed\n%s\nwant the row %q", out, want)
		}
	}
}
