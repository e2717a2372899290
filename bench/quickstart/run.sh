#!/usr/bin/env bash
# Wall time of the README's main job, `go run ./examples/quickstart`, after
# the first build, against `go run ./examples/egress` (the previous main
# job, which starts no agent and no session) in the same run, alternating.
# Usage: ROUNDS=7 bench/quickstart/run.sh   (from the repository root)
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds=${ROUNDS:-7}
go build -o /dev/null ./examples/quickstart ./examples/egress
go run ./examples/quickstart >/dev/null 2>&1 # first build and link
go run ./examples/egress >/dev/null 2>&1
ms() { local s e; s=$(date +%s%N); "$@" >/dev/null 2>&1 </dev/null; e=$(date +%s%N); echo $(( (e - s) / 1000000 )); }
q=(); b=()
for ((i = 0; i < rounds; i++)); do
	q+=("$(ms go run ./examples/quickstart)")
	b+=("$(ms go run ./examples/egress)")
done
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
mq=$(median "${q[@]}"); mb=$(median "${b[@]}")
echo "quickstart ms: ${q[*]}"
echo "egress ms:     ${b[*]}"
echo "median quickstart ${mq} ms, egress ${mb} ms, ratio $(awk -v a="$mq" -v b="$mb" 'BEGIN {printf "%.2f", a/b}')"
