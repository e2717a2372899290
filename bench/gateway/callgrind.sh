#!/usr/bin/env bash
# Instructions per call of the gateway path before tracing (BASE), with
# tracing off and with the in-memory exporter, counted by callgrind (user
# space only: the kernel's share, the loopback syscalls, is not counted).
# Each case runs at two iteration counts and the per-call figure is
# (Ir(HIGH)-Ir(LOW))/(HIGH-LOW), so the rig's setup and the binary's start
# cancel. With GOGC=off a case repeats within 1% whatever the load; with
# the default collector it moves by several percent (the pacer is partly
# timed). ROUNDS rounds show the repeatability (median, min and max per
# case). Recorded in docs/benchmarks/gateway.md ("Instruction counts").
#
# Usage (from anywhere in the repository):
#   bench/gateway/callgrind.sh   # BASE=3440224 LOW=200 HIGH=1200 ROUNDS=3
#   BASE=<commit> LOW=100 HIGH=600 ROUNDS=1 bench/gateway/callgrind.sh
# valgrind is installed with apt-get when missing (root only).
set -euo pipefail
cd "$(dirname "$0")/../.."
base=${BASE:-3440224}
low=${LOW:-200}
high=${HIGH:-1200}
rounds=${ROUNDS:-3}

if ! command -v valgrind >/dev/null 2>&1; then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
		echo "installing valgrind with apt-get" >&2
		apt-get install -y -qq valgrind >/dev/null 2>&1 || { apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq valgrind >/dev/null 2>&1; }
	fi
	command -v valgrind >/dev/null 2>&1 || { echo "valgrind is missing and could not be installed" >&2; exit 1; }
fi
valgrind --version >&2
go version >&2

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/base"
git archive "$base" | tar -x -C "$tmp/base"
(cd "$tmp/base" && go test -c -o "$tmp/base.test" ./gateway/)
go test -c -o "$tmp/new.test" ./gateway/

# ir GOGC BINARY BENCH N: the total instructions callgrind counted for
# one run. Go's asynchronous preemption signals trip an assertion in
# callgrind (threads.c, vgCallgrind_post_signal), so it is turned off;
# GOMAXPROCS=1 (-test.cpu=1) keeps the scheduler from spinning idle Ps.
ir() {
	local out="$tmp/cg.out"
	GOGC=$1 GODEBUG=asyncpreemptoff=1 valgrind --tool=callgrind --callgrind-out-file="$out" \
		"$2" -test.run '^$' -test.bench "^$3\$" -test.benchtime="$4x" -test.cpu=1 \
		>"$tmp/log" 2>&1 || { cat "$tmp/log" >&2; exit 1; }
	grep -q '^PASS' "$tmp/log" || { cat "$tmp/log" >&2; exit 1; }
	awk '/^totals:/ { print $2; exit }' "$out"
}

# Each round runs the three cases once at LOW and once at HIGH, in turn,
# under the collector's default (GOGC=100) and with it off (GOGC=off:
# the path's own instructions, no collection). Prints one line a run:
# GOGC case round Ir(LOW) Ir(HIGH) Ir-per-call, then the medians.
for round in $(seq "$rounds"); do
	for gogc in 100 off; do
		for c in "before base.test BenchmarkGatewayPath" "off new.test BenchmarkGatewayPath" "traced new.test BenchmarkGatewayPathTraced"; do
			set -- $c
			a=$(ir "$gogc" "$tmp/$2" "$3" "$low")
			b=$(ir "$gogc" "$tmp/$2" "$3" "$high")
			echo "$gogc $1 $round $a $b $(((b - a) / (high - low)))"
		done
	done
done >"$tmp/runs"
echo "GOGC case round Ir(${low}x) Ir(${high}x) Ir/call"
cat "$tmp/runs"
awk '
function median(k,   n, i, j, t, x) {
	n = cnt[k]
	for (i = 1; i <= n; i++) x[i] = v[k, i]
	for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (x[j] < x[i]) { t = x[i]; x[i] = x[j]; x[j] = t }
	lo[k] = x[1]; hi[k] = x[n]
	return n % 2 ? x[(n + 1) / 2] : (x[n / 2] + x[n / 2 + 1]) / 2
}
{ k = $1 SUBSEP $2; v[k, ++cnt[k]] = $6 }
END {
	printf "%-6s %-8s %12s %12s %12s %10s\n", "GOGC", "case", "median Ir", "min", "max", "/ before"
	split("100 off", gs, " "); split("before off traced", cs, " ")
	for (g = 1; g <= 2; g++) {
		base = median(gs[g] SUBSEP "before")
		for (c = 1; c <= 3; c++) {
			k = gs[g] SUBSEP cs[c]; m = median(k)
			printf "%-6s %-8s %12d %12d %12d %10.4f\n", gs[g], cs[c], m, lo[k], hi[k], m / base
		}
	}
}' "$tmp/runs"
