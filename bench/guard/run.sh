#!/usr/bin/env bash
# Side-by-side benchmark of the workload egress guard (not part of CI).
#
# One loopback upstream; the same load generator measures requests/s and
# p50/p99 latency for, in each round: direct requests, requests through
# `checkfu guard` (policy unrestricted, 127.0.0.1/32 treated as public),
# and requests through stripe/smokescreen (pinned below, installed with
# `go install` into a temporary GOBIN) with its log discarded, plus the
# stock smokescreen binary with its JSON log sent to /dev/null. Every
# proxy allows exactly 127.0.0.1 and nothing else private, and every proxy
# keeps up to 64 idle upstream connections per destination. Each line also
# gives the CPU time per request of the load generator, the upstream and
# the proxy (from /proc), which a noisy machine disturbs less than req/s.
#
# Usage: bench/guard/run.sh        (env: ROUNDS=3 DURATION=5s CONC=16)
set -euo pipefail

SMOKESCREEN_VERSION=v0.1.0
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-5s}
CONC=${CONC:-16}

root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT

echo "building (checkfu, loadgen, smokescreen ${SMOKESCREEN_VERSION}) ..." >&2
(cd "$root" && go build -o "$work/checkfu" ./cmd/checkfu && go build -o "$work/loadgen" ./bench/guard/loadgen)
GOBIN="$work/gobin" GOFLAGS= go install "github.com/stripe/smokescreen@${SMOKESCREEN_VERSION}"
mkdir "$work/smk"
grep -v "^//go:build ignore" "$root/bench/guard/smokescreen/main.go" >"$work/smk/main.go"
(
	cd "$work/smk"
	export GOFLAGS=
	go mod init smokescreen-quiet >/dev/null 2>&1
	go get "github.com/stripe/smokescreen@${SMOKESCREEN_VERSION}" >/dev/null 2>&1
	go mod tidy >/dev/null 2>&1
	go build -o "$work/smokescreen-quiet" main.go
)

wait_port() { # wait until 127.0.0.1:$1 accepts
	for _ in $(seq 1 100); do
		if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
		sleep 0.1
	done
	echo "port $1 never opened" >&2
	return 1
}
first_line_addr() { # wait for "listening on ADDR" in file $1 and print ADDR
	for _ in $(seq 1 100); do
		if grep -q '^listening on ' "$1" 2>/dev/null; then sed -n 's/^listening on //p' "$1" | head -1; return 0; fi
		sleep 0.1
	done
	echo "no ready line in $1" >&2
	return 1
}

"$work/loadgen" upstream >"$work/upstream.out" &
up_pid=$!
pids+=($!)
upstream=$(first_line_addr "$work/upstream.out")

echo '{"type":"unrestricted"}' >"$work/policy.json"
"$work/checkfu" guard -listen 127.0.0.1:0 -policy "$work/policy.json" -treat-as-public 127.0.0.1/32 >"$work/guard.out" 2>"$work/guard.err" &
guard_pid=$!
pids+=($!)
guard=$(first_line_addr "$work/guard.out")

# Keep-alive on both hops for every proxy: smokescreen's upstream transport
# otherwise keeps Go's default of 2 idle connections per host, so with
# CONC concurrent requests most of them would dial a new upstream
# connection. The guard keeps up to 64 per destination; smokescreen gets
# the same cap. Nothing else in its configuration changes.
printf 'transport_max_idle_conns_per_host: 64\n' >"$work/smokescreen.yaml"
smk_port=$("$work/loadgen" freeport)
"$work/smokescreen-quiet" --config-file "$work/smokescreen.yaml" --listen-ip 127.0.0.1 --listen-port "$smk_port" --allow-range 127.0.0.1/32 >/dev/null 2>&1 &
smk_pid=$!
pids+=($!)
stock_port=$("$work/loadgen" freeport)
"$work/gobin/smokescreen" --config-file "$work/smokescreen.yaml" --listen-ip 127.0.0.1 --listen-port "$stock_port" --allow-range 127.0.0.1/32 >/dev/null 2>&1 &
stock_pid=$!
pids+=($!)
wait_port "$smk_port"
wait_port "$stock_port"

target="http://${upstream}/"
echo "# $(date -u +%Y-%m-%dT%H:%MZ)  $(go version | cut -d' ' -f3-)  $(nproc) CPUs  checkfu $(cd "$root" && git rev-parse --short HEAD 2>/dev/null || echo unknown)"
echo "# target ${target}  concurrency ${CONC}  duration ${DURATION} per run  rounds ${ROUNDS}"
for round in $(seq 1 "$ROUNDS"); do
	echo "# round ${round}"
	"$work/loadgen" run -label direct -target "$target" -c "$CONC" -d "$DURATION" -cpu "upstream=$up_pid"
	"$work/loadgen" run -label "checkfu-guard" -proxy "http://${guard}" -target "$target" -c "$CONC" -d "$DURATION" -cpu "upstream=$up_pid,proxy=$guard_pid"
	"$work/loadgen" run -label "smokescreen-log-off" -proxy "http://127.0.0.1:${smk_port}" -target "$target" -c "$CONC" -d "$DURATION" -cpu "upstream=$up_pid,proxy=$smk_pid"
	"$work/loadgen" run -label "smokescreen-stock" -proxy "http://127.0.0.1:${stock_port}" -target "$target" -c "$CONC" -d "$DURATION" -cpu "upstream=$up_pid,proxy=$stock_pid"
done
