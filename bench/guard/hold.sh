#!/usr/bin/env bash
# What a forward proxy holds for connections a hostile workload keeps
# open (issue 11, "Performance that a hostile workload can push on"); not
# part of CI. Loopback only. For each of checkfu guard, stripe/smokescreen
# (pinned as in run.sh, log discarded) and Squid (Debian's squid package,
# when installed), each started fresh for each scenario:
#
#   idle:   N_IDLE keep-alive workload connections, each after one GET;
#   tunnel: N_TUNNEL CONNECT tunnels to a destination that never reads or
#           writes, from 4 loopback source addresses (the guard's
#           per-source cap is 256);
#
# it reports the proxy's descriptors, resident memory and threads while
# they are held (bench/guard/hold), and for the Go proxies the goroutine
# count from a SIGQUIT dump taken while they are held. One more checkfu row opens
# 2000 tunnels from 8 sources, to show the 1024 cap holding.
#
# Usage: bench/guard/hold.sh        (env: N_IDLE=5000 N_TUNNEL=1000)
set -euo pipefail

SMOKESCREEN_VERSION=v0.1.0
N_IDLE=${N_IDLE:-5000}
N_TUNNEL=${N_TUNNEL:-1000}

root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

echo "building (checkfu, loadgen, hold, smokescreen ${SMOKESCREEN_VERSION}) ..." >&2
(cd "$root" && go build -o "$work/checkfu" ./cmd/checkfu && go build -o "$work/loadgen" ./bench/guard/loadgen && go build -o "$work/hold" ./bench/guard/hold)
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

first_line_addr() { # wait for "listening on ADDR" in file $1 and print ADDR
	for _ in $(seq 1 100); do
		if grep -q '^listening on ' "$1" 2>/dev/null; then sed -n 's/^listening on //p' "$1" | head -1; return 0; fi
		sleep 0.1
	done
	echo "no ready line in $1" >&2
	return 1
}
wait_port() { # wait until 127.0.0.1:$1 accepts
	for _ in $(seq 1 100); do
		if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
		sleep 0.1
	done
	echo "port $1 never opened" >&2
	return 1
}
goroutines() { # count the goroutines in the SIGQUIT dump (GOTRACEBACK=all) that hold -quit asked Go process $1 for, in its stderr $2
	for _ in $(seq 1 50); do kill -0 "$1" 2>/dev/null || break; sleep 0.1; done
	echo "  goroutines while holding: $(grep -c '^goroutine ' "$2" || true)"
}

"$work/loadgen" upstream >"$work/upstream.out" &
pids+=($!)
upstream=$(first_line_addr "$work/upstream.out")
target="http://${upstream}/"
echo '{"type":"unrestricted"}' >"$work/policy.json"
printf 'transport_max_idle_conns_per_host: 64\n' >"$work/smokescreen.yaml"

start_checkfu() {
	GOTRACEBACK=all "$work/checkfu" guard -listen 127.0.0.1:0 -policy "$work/policy.json" -treat-as-public 127.0.0.1/32 >"$work/p.out" 2>"$work/p.err" &
	ppid=$!
	pids+=($ppid)
	paddr=$(first_line_addr "$work/p.out")
}
start_smokescreen() {
	local port
	port=$("$work/loadgen" freeport)
	GOTRACEBACK=all "$work/smokescreen-quiet" --config-file "$work/smokescreen.yaml" --listen-ip 127.0.0.1 --listen-port "$port" --allow-range 127.0.0.1/32 >/dev/null 2>"$work/p.err" &
	ppid=$!
	pids+=($ppid)
	wait_port "$port"
	paddr="127.0.0.1:$port"
}
start_squid() {
	local port
	port=$("$work/loadgen" freeport)
	mkdir -p "$work/squid"
	chmod 777 "$work/squid"
	cat >"$work/squid.conf" <<CONF
http_port 127.0.0.1:${port}
acl CONNECT method CONNECT
http_access allow all
cache deny all
cache_mem 8 MB
access_log none
cache_log ${work}/squid/cache.log
pid_filename ${work}/squid/squid.pid
coredump_dir ${work}/squid
max_filedescriptors 16384
workers 1
shutdown_lifetime 1 seconds
CONF
	squid -N -f "$work/squid.conf" 2>"$work/p.err" &
	ppid=$!
	pids+=($ppid)
	wait_port "$port"
	paddr="127.0.0.1:$port"
}
stop() { kill "$ppid" 2>/dev/null || true; wait "$ppid" 2>/dev/null || true; }

proxies="checkfu smokescreen"
if command -v squid >/dev/null; then proxies="$proxies squid"; else echo "# squid not installed: apt-get install squid" >&2; fi

echo "# $(date -u +%Y-%m-%dT%H:%MZ)  $(go version | cut -d' ' -f3-)  $(nproc) CPUs  checkfu $(cd "$root" && git rev-parse --short HEAD 2>/dev/null || echo unknown)  $(squid -v 2>/dev/null | head -1 || true)"
for p in $proxies; do
	"start_$p"
	q=-quit=true; [ "$p" = squid ] && q=-quit=false
	"$work/hold" -label "$p" -mode idle -proxy "$paddr" -pid "$ppid" -n "$N_IDLE" -target "$target" "$q"
	if [ "$p" != squid ]; then goroutines "$ppid" "$work/p.err"; fi
	stop
	"start_$p"
	"$work/hold" -label "$p" -mode tunnel -proxy "$paddr" -pid "$ppid" -n "$N_TUNNEL" -sources 127.0.0.2,127.0.0.3,127.0.0.4,127.0.0.5 "$q"
	if [ "$p" != squid ]; then goroutines "$ppid" "$work/p.err"; fi
	stop
done
start_checkfu
"$work/hold" -label "checkfu (caps)" -mode tunnel -proxy "$paddr" -pid "$ppid" -n 2000 -sources 127.0.0.2,127.0.0.3,127.0.0.4,127.0.0.5,127.0.0.6,127.0.0.7,127.0.0.8,127.0.0.9 -quit
goroutines "$ppid" "$work/p.err"
stop
