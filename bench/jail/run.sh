#!/usr/bin/env bash
# Start to first byte of `echo x` on the jail provider (init stage: the
# test binary re-executed, jail; the checkfu-jail-init program, built
# from the tree with go build, jail_program), against a bare
# fork and exec of the same command (the baseline), bwrap with the same
# namespaces and mount plan, and `docker run` where an engine answers,
# in rounds that alternate the variants; then the memory one idle jail
# holds. Prints each
# variant's median over COUNT runs and its ratio to the baseline and to
# bwrap, and the jail's ratio to bwrap round by round (median). A round's
# figure is the median of its starts (p50_ms), not their mean. Each round
# also runs BenchmarkJailAgainstBwrap, which alternates a jail_program
# start and a bwrap start one by one (its median ratio per round, then
# the median of the rounds).
# Recorded in docs/benchmarks/adapters.md.
#
# Usage (from the repository root, as root or with user namespaces):
#   COUNT=5 BENCHTIME=50x bench/jail/run.sh
# CHECKFU_BENCH_SETTLE=30ms pauses after each start, outside the timer,
# in every variant, so that no start shares the CPUs with the kernel's
# teardown of the one before (unset: back to back).
# bwrap is installed with apt-get when missing (root only); docker run is
# measured only when `docker info` answers and CHECKFU_BENCH_DOCKER_IMAGE
# names an image the engine already holds (no pull).
set -euo pipefail
cd "$(dirname "$0")/../.."
count=${COUNT:-5}
benchtime=${BENCHTIME:-50x}

if ! command -v bwrap >/dev/null 2>&1; then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
		echo "installing bubblewrap with apt-get" >&2
		apt-get install -y -qq bubblewrap >/dev/null 2>&1 || { apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq bubblewrap >/dev/null 2>&1; } || echo "bubblewrap not installed: the bwrap row is skipped" >&2
	else
		echo "no bwrap and no apt-get as root: the bwrap row is skipped" >&2
	fi
fi
if [ -n "${CHECKFU_BENCH_DOCKER_IMAGE:-}" ] && ! docker info >/dev/null 2>&1; then
	echo "no Docker engine answers: the docker_run row is skipped" >&2
	unset CHECKFU_BENCH_DOCKER_IMAGE
fi
command -v bwrap >/dev/null 2>&1 && bwrap --version >&2 || true

# One test binary; COUNT rounds, each running every variant once in
# turn (os_exec, jail, jail_program, bwrap, docker_run, then the next
# round), so the variants alternate as the machine's speed drifts.
bin=$(mktemp -d /tmp/checkfu-jail-bench.XXXXXX)
trap 'rm -rf "$bin"' EXIT
go test -c -o "$bin/jail.test" ./adapters/jail/
out=$(for ((r = 1; r <= count; r++)); do
	(cd adapters/jail && "$bin/jail.test" -test.run '^$' -test.bench '^(BenchmarkStartToFirstByte|BenchmarkJailAgainstBwrap)$' -test.benchtime="$benchtime")
done
(cd adapters/jail && "$bin/jail.test" -test.run '^$' -test.bench '^BenchmarkIdleMemory$' -test.benchtime="$benchtime" -test.count="$count"))
echo "$out" | grep -E '^(Benchmark|goos|goarch|cpu)' >&2
echo "$out" | awk '
function median(name,   n, i, j, t, a) {
	n = cnt[name]
	for (i = 1; i <= n; i++) a[i] = v[name, i]
	for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
/^BenchmarkStartToFirstByte\// {
	split($1, p, "/"); name = p[2]; sub(/-[0-9]+$/, "", name)
	if (name == "os_exec") round++
	# p50_ms, the median start of the round, when the benchmark
	# reports it; else ns/op, the mean.
	t = ($6 == "p50_ms") ? $5 : $3 / 1e6
	v[name, ++cnt[name]] = t
	r[name, round] = t
}
/^BenchmarkJailAgainstBwrap/ {
	for (i = 3; i < NF; i++) if ($(i + 1) == "ratio_p50") v["interleaved", ++cnt["interleaved"]] = $i
}
/^BenchmarkIdleMemory/ {
	for (i = 3; i < NF; i++) if ($(i + 1) ~ /_kB$/) { m = $(i + 1); v[m, ++cnt[m]] = $i }
}
END {
	base = median("os_exec"); bw = cnt["bwrap"] ? median("bwrap") : 0
	printf "%-12s %12s %12s %12s\n", "variant", "median ms", "/ os_exec", "/ bwrap"
	split("os_exec jail jail_program bwrap docker_run", names, " ")
	for (k = 1; k <= 5; k++) {
		n = names[k]; if (!cnt[n]) { printf "%-12s %12s\n", n, "skipped"; continue }
		m = median(n)
		printf "%-12s %12.2f %12.2f %12s\n", n, m, m / base, bw ? sprintf("%.2f", m / bw) : "-"
	}
	# The ratio to bwrap round by round (the pairing keeps it meaningful
	# while the machine drifts), its median over the rounds.
	split("jail jail_program", pn, " ")
	for (k = 1; k <= 2; k++) {
		n = pn[k]; m = 0
		for (i = 1; i <= round; i++) if (r[n, i] && r["bwrap", i]) v["pair_" n, ++m] = r[n, i] / r["bwrap", i]
		cnt["pair_" n] = m
		if (m) printf "%-12s paired / bwrap, median of %d rounds: %.2f\n", n, m, median("pair_" n)
	}
	# BenchmarkJailAgainstBwrap: jail_program and bwrap start by start,
	# alternating; the median ratio of each round, then their median.
	if (cnt["interleaved"]) printf "%-12s interleaved / bwrap, median of %d rounds: %.2f\n", "jail_program", cnt["interleaved"], median("interleaved")
	if (cnt["rss_kB"]) printf "idle jail: rss %.0f kB, cgroup %.0f kB; bare sleep rss %.0f kB\n", median("rss_kB"), median("cgroup_kB"), median("bare_rss_kB")
}'
