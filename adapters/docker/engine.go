package docker

import (
	"context"
	"strings"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/adapters/docker/internal/engine"
)

// DefaultLabel is the label an Engine puts on everything it creates when
// Options names none.
const DefaultLabel = "checkfu.managed=1"

// TestLabel is the label the adapter's own tests put on everything they
// create; .ci/setup.d/20-docker.sh removes whatever carries it.
const TestLabel = "checkfu.test=1"

// Options configures [Connect].
type Options struct {
	// Socket is the engine's Unix socket path. Empty means the docker
	// CLI's rule: DOCKER_HOST when it is unix://PATH, otherwise
	// /var/run/docker.sock.
	Socket string
	// Label is the KEY=VALUE label put on every container, network and
	// image the Engine creates. Empty means DefaultLabel.
	Label string
}

// An Engine is a connection to one Docker engine. Its methods are safe
// for concurrent use.
type Engine struct {
	c          *engine.Client
	labelKey   string
	labelValue string
}

// Connect finds the engine, pings it and negotiates the API version
// (1.41 at least). No engine answering is refused with
// CodeEngineUnreachable.
func Connect(ctx context.Context, opts Options) (*Engine, error) {
	label := opts.Label
	if label == "" {
		label = DefaultLabel
	}
	k, v, ok := strings.Cut(label, "=")
	if !ok || k == "" || strings.ContainsAny(label, " \t\n,") {
		return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "docker: label %s is not KEY=VALUE", checkfu.Quote(label))
	}
	sock := opts.Socket
	if sock == "" {
		s, err := engine.SocketFromEnv()
		if err != nil {
			return nil, err
		}
		sock = s
	}
	c, err := engine.Dial(ctx, sock)
	if err != nil {
		return nil, err
	}
	return &Engine{c: c, labelKey: k, labelValue: v}, nil
}

// APIVersion returns the negotiated Engine API version, such as "1.41".
func (e *Engine) APIVersion() string { return e.c.APIVersion() }

// EngineVersion returns the engine's version, such as "20.10.24+dfsg1".
func (e *Engine) EngineVersion() string { return e.c.EngineVersion() }

// Close releases the Engine's idle connections. Instances and topologies
// must be closed first.
func (e *Engine) Close() { e.c.Close() }

// labels returns the Engine's label with extra members.
func (e *Engine) labels(extra map[string]string) map[string]string {
	m := map[string]string{e.labelKey: e.labelValue}
	for k, v := range extra {
		m[k] = v
	}
	return m
}

// Runtimes returns the OCI runtimes the engine has registered. An
// instance may ask for RuntimeRunsc (the gVisor tier) only when it is
// among them.
func (e *Engine) Runtimes(ctx context.Context) ([]string, error) { return e.c.Runtimes(ctx) }
