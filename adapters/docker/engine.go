package docker

import (
	"context"
	"errors"
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
	// NamePrefix begins the names of the images the Engine builds
	// (PREFIX-busybox:HASH, PREFIX-guard:HASH). Empty means
	// DefaultNamePrefix. A fresh prefix finds nothing cached.
	NamePrefix string
}

// DefaultNamePrefix is the image name prefix when Options names none.
const DefaultNamePrefix = "checkfu"

// An Engine is a connection to one Docker engine. Its methods are safe
// for concurrent use.
type Engine struct {
	c          *engine.Client
	labelKey   string
	labelValue string
	prefix     string
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
	prefix := opts.NamePrefix
	if prefix == "" {
		prefix = DefaultNamePrefix
	}
	if !validPrefix(prefix) {
		return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "docker: name prefix %s is not lower-case letters, digits, '-' and '_' starting with a letter or digit", checkfu.Quote(prefix))
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
	return &Engine{c: c, labelKey: k, labelValue: v, prefix: prefix}, nil
}

// validPrefix reports whether p can begin an image repository name.
func validPrefix(p string) bool {
	if len(p) == 0 || len(p) > 64 {
		return false
	}
	for i, r := range p {
		ok := r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || i > 0 && (r == '-' || r == '_')
		if !ok {
			return false
		}
	}
	return true
}

// RemoveLabelled removes every container (running or not) and every
// image that carries the Engine's label, and returns how many it
// removed. It is the cleanup of a run whose Engine has a label of its
// own: with the label another run shares (DefaultLabel), it removes
// that run's objects too. Images are removed by tag, so a tag another
// label's run holds on the same image stays.
func (e *Engine) RemoveLabelled(ctx context.Context) (int, error) {
	n := 0
	ids, err := e.c.ListByLabel(ctx, e.labelKey, e.labelValue)
	if err != nil {
		return n, err
	}
	for _, id := range ids {
		if err := e.c.RemoveContainer(ctx, id, true); err != nil {
			return n, err
		}
		n++
	}
	refs, err := e.c.ListImagesByLabel(ctx, e.labelKey, e.labelValue)
	if err != nil {
		return n, err
	}
	for _, ref := range refs {
		if err := e.c.RemoveImage(ctx, ref); err != nil && !errors.Is(err, CodeImageMissing) {
			return n, err
		}
		n++
	}
	return n, nil
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
