package jail

import (
	"context"

	"github.com/checkfu/checkfu/egress"
)

// RelayPort is the loopback port of an allowlist jail's relay: the
// workload's proxy (http_proxy and https_proxy name it) and its only way
// out.
const RelayPort = 3128

// A GuardFunc starts the egress guard of one allowlist instance, which
// allows exactly hosts, listening on a Unix socket outside every jail.
// It returns the socket's path and a function that stops the guard. The
// relay of each of the instance's jails forwards every connection to
// that socket, so the guard decides every request.
type GuardFunc func(ctx context.Context, hosts []egress.HostPort) (socket string, stop func() error, err error)
