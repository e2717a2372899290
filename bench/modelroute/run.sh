#!/usr/bin/env bash
# The model route's three benchmark figures, each as a same-run ratio,
# from one test binary of gateway/door, in ROUNDS rounds so that the arms
# alternate as the machine's speed drifts:
#
#   - a long stream's throughput (BenchmarkModelRouteLongStream): the
#     route against the scripted model server reached directly (a mock,
#     TLS on loopback), and the route's bare topology (hops: the door's
#     relay and a plain relay in the plane's place) against both; the
#     ratios hops/direct, route/hops and route/direct per round, then
#     their medians;
#   - time to first token (BenchmarkModelRouteFirstToken): route minus
#     direct per round, then the median;
#   - a tool call (BenchmarkToolCall): through the door's stdio relay
#     against the broker socket directly, per round, then the median.
#
# Recorded in docs/benchmarks/model-route.md (the stream and the first
# token) and docs/benchmarks/door.md (the tool call).
#
# Usage (from the repository root):
#   ROUNDS=10 STREAM_BENCHTIME=5x TOKEN_BENCHTIME=200x CALL_BENCHTIME=2000x bench/modelroute/run.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds=${ROUNDS:-10}
stream=${STREAM_BENCHTIME:-5x}
token=${TOKEN_BENCHTIME:-200x}
call=${CALL_BENCHTIME:-2000x}

bin=$(mktemp -d /tmp/checkfu-modelroute-bench.XXXXXX)
trap 'rm -rf "$bin"' EXIT
go test -c -o "$bin/door.test" ./gateway/door/
out=$(for ((r = 1; r <= rounds; r++)); do
	echo "round $r"
	(cd gateway/door &&
		"$bin/door.test" -test.run '^$' -test.bench '^BenchmarkModelRouteLongStream$' -test.benchtime="$stream" &&
		"$bin/door.test" -test.run '^$' -test.bench '^BenchmarkModelRouteFirstToken$' -test.benchtime="$token" &&
		"$bin/door.test" -test.run '^$' -test.bench '^BenchmarkToolCall$' -test.benchtime="$call")
done)
echo "$out" | grep -E '^(Benchmark|goos|goarch|cpu)' >&2
echo "$out" | awk -f bench/modelroute/figures.awk
