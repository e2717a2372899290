# Starts a throwaway Docker engine for the Docker adapter's tests
# (adapters/docker). Sourced by .ci/run, which defines apt_install, $work
# and ci_cleanups. See docs/../shared notes docker.md for what each flag
# closes.
#
# - dockerd runs by PID, with its data root, exec root, pid file and
#   socket under $work, so nothing of the host's own engine (if any) is
#   touched.
# - Every address it hands out is inside 198.18.0.0/15: the default bridge
#   is 198.19.0.0/24 (--bip), other networks come from 198.19.0.0/16
#   (--default-address-pool). The adapter's topologies pick their own
#   pairs of /24s in 198.18.0.0/16.
# - --dns names an unserved 198.18/15 address: containers never learn the
#   host's resolver, and the embedded DNS never forwards from the host's
#   namespace to a loopback resolver (CVE-2024-29018; Debian's 20.10 is not
#   patched).
# - DOCKER-USER drops anything from 198.18.0.0/15 bound outside it.
#
# Exports DOCKER_HOST=unix://$work/docker.sock and CHECKFU_TEST_DOCKER=1.
# The cleanup removes every container, network and image labelled
# checkfu.test=1, stops dockerd by PID, restores iptables, ip6tables and
# ip_forward, deletes docker0 and checks nothing stays mounted.
docker_ci_dir=$work/docker
docker_ci_sock=$work/docker.sock
docker_ci_bip=${CHECKFU_CI_DOCKER_BIP:-198.19.0.1/24}
docker_ci_pool=${CHECKFU_CI_DOCKER_POOL:-198.19.0.0/16}
docker_ci_dns=${CHECKFU_CI_DOCKER_DNS:-198.18.255.53}

# The tests' static binaries (the guard's checkfu, the probe, the owned
# DNS) need a CGO_ENABLED=0 build of the module, which shares nothing with
# the -race build: start it now, so it overlaps the package installs, and
# wait for it at the end. The tests' own go build is then a cache hit.
mkdir -p "$work/docker-bin"
docker_ci_build_t0=$(date +%s)
(
	for p in ./cmd/checkfu ./adapters/docker/internal/cmd/cfprobe ./adapters/docker/internal/cmd/cfdnsd; do
		CGO_ENABLED=0 GOOS=linux go build -trimpath -o "$work/docker-bin/" "$p" || exit 1
	done
) >"$work/docker-bin/build.log" 2>&1 &
docker_ci_build_pid=$!

if ! command -v dockerd >/dev/null 2>&1; then
	docker_ci_t0=$(date +%s)
	apt_install docker.io
	echo "docker.io installed in $(( $(date +%s) - docker_ci_t0 )) s"
fi
# gVisor, the second isolation tier, when Debian's package installs.
if ! command -v runsc >/dev/null 2>&1; then
	apt_install runsc || echo "20-docker.sh: runsc did not install; the gVisor tests will skip"
fi
mkdir -p "$docker_ci_dir"
# runsc runs with its own --network=none: gVisor's netstack is never
# wired to a host interface (under NetworkMode none it otherwise refuses
# to start: "cannot run with network enabled in root network namespace").
if command -v runsc >/dev/null 2>&1; then
	printf '{"runtimes": {"runsc": {"path": "%s", "runtimeArgs": ["--network=none"]}}}\n' "$(command -v runsc)" >"$docker_ci_dir/daemon.json"
else
	echo '{}' >"$docker_ci_dir/daemon.json"
fi
for docker_ci_tool in dockerd iptables-save ip6tables-save iptables-restore ip6tables-restore nft ip; do
	if ! command -v "$docker_ci_tool" >/dev/null 2>&1; then
		echo "20-docker.sh: $docker_ci_tool is missing after installing docker.io" >&2
		exit 1
	fi
done
# A docker0 with no dockerd alive is what a killed engine leaves (links
# outlive processes): remove it, and the bridges and veths of our own
# topologies, so this run starts clean. A live engine is never touched.
if ip link show docker0 >/dev/null 2>&1; then
	if pgrep -x dockerd >/dev/null 2>&1; then
		echo "20-docker.sh: docker0 exists and dockerd $(pgrep -x dockerd | tr '\n' ' ')runs: another engine runs here; stop it first" >&2
		exit 1
	fi
	for docker_ci_link in $(ip -o link show | awk -F': ' '{print $2}' | sed 's/@.*//' | grep -E '^(docker0|cf[0-9]+[io]|br-[0-9a-f]{12})$' || true); do
		echo "20-docker.sh: removing $docker_ci_link, left by an engine that no longer runs" >&2
		ip link del "$docker_ci_link" 2>/dev/null || true
	done
fi

mkdir -p "$docker_ci_dir"
# What dockerd changes, saved before it starts.
iptables-save >"$docker_ci_dir/iptables.save"
ip6tables-save >"$docker_ci_dir/ip6tables.save"
cat /proc/sys/net/ipv4/ip_forward >"$docker_ci_dir/ip_forward.save"
nft list tables >"$docker_ci_dir/nft-tables.save" 2>/dev/null || true

# iptables_rules: an iptables-save dump on stdin, without its comments
# and with every [packets:bytes] counter zeroed.
iptables_rules() {
	grep -v '^#' | sed -E 's/\[[0-9]+:[0-9]+\]/[0:0]/g'
}

# docker_ci_stop DIR PID: the cleanup, with everything it needs passed in
# so it runs the same from .ci/run's trap and from a driver's state file.
docker_ci_stop() {
	local dir=$1 pid=$2 i
	if [ -S "$dir/../docker.sock" ] && command -v docker >/dev/null 2>&1; then
		local dh="unix://$dir/../docker.sock"
		local ids
		ids=$(DOCKER_HOST=$dh timeout 20 docker ps -aq --filter label=checkfu.test=1 2>/dev/null || true)
		[ -n "$ids" ] && DOCKER_HOST=$dh timeout 30 docker rm -f $ids >/dev/null 2>&1
		ids=$(DOCKER_HOST=$dh timeout 20 docker network ls -q --filter label=checkfu.test=1 2>/dev/null || true)
		[ -n "$ids" ] && DOCKER_HOST=$dh timeout 30 docker network rm $ids >/dev/null 2>&1
		ids=$(DOCKER_HOST=$dh timeout 20 docker images -q --filter label=checkfu.test=1 2>/dev/null || true)
		[ -n "$ids" ] && DOCKER_HOST=$dh timeout 30 docker rmi -f $ids >/dev/null 2>&1
	fi
	if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
		kill -TERM "$pid"
		for i in $(seq 1 150); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		if kill -0 "$pid" 2>/dev/null; then
			echo "20-docker.sh: dockerd ($pid) ignored TERM for 15 s; killing it" >&2
			kill -KILL "$pid" 2>/dev/null
			sleep 0.5
		fi
	fi
	# What dockerd started and left behind: its containerd, and shims or
	# gVisor sandboxes of containers that never started properly (a shim
	# is built to outlive containerd). Each names a path under $dir on its
	# command line; each is stopped by its own PID.
	local p cmdline left_pids=()
	for p in /proc/[0-9]*; do
		cmdline=$(tr '\0' ' ' 2>/dev/null <"$p/cmdline") || continue
		case "$cmdline" in
		*"$dir/"*) left_pids+=("${p#/proc/}") ;;
		esac
	done
	if [ ${#left_pids[@]} -gt 0 ]; then
		echo "20-docker.sh: stopping ${#left_pids[@]} process(es) dockerd left: ${left_pids[*]}" >&2
		kill -TERM "${left_pids[@]}" 2>/dev/null
		sleep 1
		kill -KILL "${left_pids[@]}" 2>/dev/null || true
	fi
	# Tables dockerd (or a test) created go; the ones that were there are
	# restored from their dumps.
	local fam name
	nft list tables 2>/dev/null | while read -r _ fam name; do
		grep -qx "table $fam $name" "$dir/nft-tables.save" || nft delete table "$fam" "$name"
	done
	[ -s "$dir/iptables.save" ] && iptables-restore <"$dir/iptables.save"
	[ -s "$dir/ip6tables.save" ] && ip6tables-restore <"$dir/ip6tables.save"
	sysctl -qw net.ipv4.ip_forward="$(cat "$dir/ip_forward.save")" >/dev/null
	ip link del docker0 2>/dev/null || true
	local left
	left=$(ip -o link show | awk -F': ' '{print $2}' | grep -E '^(cf[0-9]+[io]|br-[0-9a-f]{12})(@|$)' || true)
	if [ -n "$left" ]; then
		echo "20-docker.sh: links left behind: $left" >&2
	fi
	if grep -q " $dir/" /proc/mounts; then
		echo "20-docker.sh: mounts left under $dir:" >&2
		grep " $dir/" /proc/mounts >&2
		return 1
	fi
	# Rules are compared without comments or packet counters: a restore
	# zeroes a chain's counters, and traffic moves them before the compare.
	local rules_diff
	if ! rules_diff=$(diff <(iptables_rules <"$dir/iptables.save") <(iptables-save | iptables_rules)); then
		echo "20-docker.sh: iptables differs from its saved state (< saved, > now):" >&2
		printf '%s\n' "$rules_diff" | head -n 40 >&2
		return 1
	fi
	rm -rf "$dir"
}

docker_ci_t0=$(date +%s%N)
dockerd --data-root "$docker_ci_dir/root" --exec-root "$docker_ci_dir/exec" \
	--pidfile "$docker_ci_dir/docker.pid" --host "unix://$docker_ci_sock" \
	--bip "$docker_ci_bip" --default-address-pool "base=$docker_ci_pool,size=24" \
	--dns "$docker_ci_dns" --config-file "$docker_ci_dir/daemon.json" >"$docker_ci_dir/dockerd.log" 2>&1 &
docker_ci_pid=$!
ci_cleanups+=("docker_ci_stop '$docker_ci_dir' '$docker_ci_pid'")
export DOCKER_HOST=unix://$docker_ci_sock
docker_ci_ready=""
for docker_ci_i in $(seq 1 300); do
	if ! kill -0 "$docker_ci_pid" 2>/dev/null; then
		break
	fi
	if docker version >/dev/null 2>&1; then
		docker_ci_ready=1
		break
	fi
	sleep 0.1
done
if [ -z "$docker_ci_ready" ]; then
	echo "20-docker.sh: dockerd did not answer within 30 s; its log:" >&2
	tail -n 40 "$docker_ci_dir/dockerd.log" >&2
	exit 1
fi
# The safety net: nothing from the test block leaves it.
iptables -I DOCKER-USER -s 198.18.0.0/15 ! -d 198.18.0.0/15 -j DROP
export CHECKFU_TEST_DOCKER=1
if ! wait "$docker_ci_build_pid"; then
	echo "20-docker.sh: the static test binaries did not build:" >&2
	cat "$work/docker-bin/build.log" >&2
	exit 1
fi
echo "static test binaries built in $(( $(date +%s) - docker_ci_build_t0 )) s (overlapping the install)"
echo "dockerd $docker_ci_pid ready on $DOCKER_HOST in $(( ($(date +%s%N) - docker_ci_t0) / 1000000 )) ms"
