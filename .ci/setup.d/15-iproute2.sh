# The conformance matrix's network-namespace variant (the jail's topology)
# creates its namespace and veth pair with ip(8). Sourced by .ci/run.
if ! command -v ip >/dev/null 2>&1; then
	apt_install iproute2
fi
echo "ip(8): $(command -v ip)"
