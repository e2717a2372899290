package broker_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/checkfu/checkfu/adapters/docker"
	"github.com/checkfu/checkfu/custody/authz"
	"github.com/checkfu/checkfu/gateway/broker"
	"github.com/checkfu/checkfu/gateway/internal/rigtest"
)

// dockerEngine connects to the engine DOCKER_HOST names. Without one it
// skips; under CI it fails (.ci/setup.d/20-docker.sh starts one).
func dockerEngine(t *testing.T) *docker.Engine {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	e, err := docker.Connect(ctx, docker.Options{Label: docker.TestLabel})
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI is set but no Docker engine answers (.ci/setup.d/20-docker.sh must start dockerd): %v", err)
		}
		t.Skipf("no Docker engine answers (start one with .ci/setup.d/20-docker.sh or set DOCKER_HOST): %v", err)
	}
	t.Cleanup(e.Close)
	return e
}

// TestDockerWorkloadReachesOnlyTheBroker runs a capability-enabled
// workload on a real engine: NetworkMode none, and the broker's socket in
// a host directory only this test (the plane) serves, mounted read-only.
// From inside, the workload lists its tools and makes an allowed and a
// denied call through the broker, and every other way out fails: it has
// a loopback interface only, no TCP or UDP route (198.18.0.0/15 targets,
// never answered by anything) and no DNS.
func TestDockerWorkloadReachesOnlyTheBroker(t *testing.T) {
	e := dockerEngine(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	probe := filepath.Join(t.TempDir(), "brokerprobe")
	if err := docker.BuildStatic(ctx, "../..", "./gateway/broker/internal/cmd/brokerprobe", probe); err != nil {
		t.Fatal(err)
	}
	img, err := e.BusyboxImage(ctx, docker.ImageOptions{Binaries: map[string]string{"/usr/local/bin/brokerprobe": probe}})
	if err != nil {
		t.Fatal(err)
	}

	r := rigtest.New(t)
	r.Tools = r.Tools[:2]
	r.Grant("issues.list")
	b, err := broker.New(r.Channel(rigtest.Member()))
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "checkfu-broker-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	// The workload runs as a non-root user: it must be able to reach the
	// socket inside the directory, and nothing else is in it.
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	ln, err := broker.ListenUnix(filepath.Join(dir, "broker.sock"))
	if err != nil {
		t.Fatal(err)
	}
	sctx, scancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- b.Serve(sctx, ln) }()
	t.Cleanup(func() {
		scancel()
		<-served
	})

	inst, err := e.CreateInstance(ctx, docker.InstanceConfig{Image: img, BrokerDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { inst.Destroy(context.Background()) })
	p, err := inst.Open(ctx, docker.ProcessSpec{Argv: []string{
		"/usr/local/bin/brokerprobe", docker.BrokerMount + "/broker.sock", "list_issues", "create_issue",
		"tcp:198.18.0.1:443", "tcp:198.18.0.1:80", "udp:198.18.0.53:53", "tcp:[2001:db8::1]:443",
	}})
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	done := make(chan struct{})
	go func() { io.Copy(&stderr, p.Stderr()); close(done) }()
	out, _ := io.ReadAll(p.Stdout())
	<-done
	code, err := p.Wait()
	if err != nil || code != 0 {
		t.Fatalf("probe exit %d, %v\nstdout %s\nstderr %s", code, err, out, stderr.Bytes())
	}
	ev := p.Evidence()
	if ev.NetworkMode != "none" || !slices.Equal(ev.Networks, []string{"none"}) || !slices.Equal(ev.Binds, []string{dir + ":" + docker.BrokerMount + ":ro"}) {
		t.Fatalf("isolation read back: network %s %v, binds %v", ev.NetworkMode, ev.Networks, ev.Binds)
	}
	noLeak(t, "what the workload saw", out)
	var rep struct {
		Interfaces []string
		Tools      []string
		Allowed    struct {
			IsError bool
			Text    string
		}
		Denied struct {
			IsError bool
			Text    string
		}
		Dials map[string]string
		DNS   string
		Error string
	}
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("probe output %q: %v", out, err)
	}
	if rep.Error != "" {
		t.Fatalf("probe: %s", rep.Error)
	}
	if !slices.Equal(rep.Interfaces, []string{"lo"}) {
		t.Errorf("interfaces %v, want only lo", rep.Interfaces)
	}
	slices.Sort(rep.Tools)
	if !slices.Equal(rep.Tools, []string{"create_issue", "list_issues"}) {
		t.Errorf("tools %v", rep.Tools)
	}
	if rep.Allowed.IsError || rep.Allowed.Text != `{"issues":[{"n":1}]}` {
		t.Errorf("allowed call %+v", rep.Allowed)
	}
	if !rep.Denied.IsError || rep.Denied.Text != "refused: "+string(authz.CodePermissionMissing) {
		t.Errorf("denied call %+v", rep.Denied)
	}
	if len(rep.Dials) != 4 {
		t.Errorf("dials %v", rep.Dials)
	}
	for target, res := range rep.Dials {
		// No route at all, not a timeout: a bridged container would
		// time out on these never-answered addresses instead.
		if !strings.Contains(res, "network is unreachable") && !strings.Contains(res, "cannot assign requested address") {
			t.Errorf("dial %s: %s, want no route", target, res)
		}
	}
	if rep.DNS == "resolved" {
		t.Error("the workload resolved a name")
	}
	t.Logf("dials %v; dns %s", rep.Dials, rep.DNS)
}
