package runner_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/checkfu/checkfu/adapters"
	"github.com/checkfu/checkfu/runner"
)

// mounter is the process provider dressed as a BrokerMounter, as
// *docker.Provider is: it records whether another local user could
// reach the broker directory it is handed, which is the socket's
// directory on the plane's host.
type mounter struct {
	runner.Provider
	dir       string
	reachable bool
}

func (m *mounter) CreateWithBroker(ctx context.Context, spec adapters.InstanceSpec, brokerDir string) (adapters.Instance, error) {
	m.dir, m.reachable = brokerDir, othersTraverse(brokerDir)
	return m.Create(ctx, spec)
}

func (m *mounter) BrokerPath() string { return m.dir }

// othersTraverse reports whether every directory from / down to dir lets
// other users search it, so that a stranger can reach dir/broker.sock
// (mode 0666) by its path.
func othersTraverse(dir string) bool {
	for d := dir; ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err != nil || fi.Mode().Perm()&0o001 == 0 {
			return false
		}
		if d == filepath.Dir(d) {
			return true
		}
	}
}

// TestBrokerMountedDirectoryPrivate: when the provider mounts the broker
// directory into a container (whose non-root user must traverse it), the
// directory is still unreachable to another local user on the plane's
// host: the socket is 0666, so a traversable path would hand a stranger
// the session's tool calls, under its lease, once the agent's evidence
// matched.
func TestBrokerMountedDirectoryPrivate(t *testing.T) {
	m := &mounter{Provider: runner.Process()}
	g := newRig(t, func(c *runner.Config, _ *rig) { c.Provider = m })
	s := g.admitted(t)
	_, err := s.Launch(context.Background(), runner.LaunchConfig{Process: adapters.ProcessSpec{Argv: []string{"/bin/true"}}})
	if err == nil {
		t.Fatal("/bin/true answered initialize")
	}
	if m.dir == "" {
		t.Fatal("CreateWithBroker was not called")
	}
	if m.reachable {
		t.Fatalf("broker directory %s is reachable by every local user", m.dir)
	}
	if fi, err := os.Stat(m.dir); err != nil || fi.Mode().Perm()&0o005 != 0o005 {
		t.Fatalf("broker directory %s: %v, %v; the container's user must traverse it", m.dir, fi.Mode(), err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Dir(m.dir)); !os.IsNotExist(err) {
		t.Fatalf("after Close, the broker's private directory is still there: %v", err)
	}
}
