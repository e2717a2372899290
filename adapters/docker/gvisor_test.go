package docker

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
)

// TestGVisorTier runs a process under gVisor (runsc, started by the
// engine with its own --network=none) with the same isolation, and checks
// that the evidence and the kernel say so.
func TestGVisorTier(t *testing.T) {
	e := testEngine(t)
	rts, err := e.Runtimes(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(rts, RuntimeRunsc) {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI is set but the engine has no %s runtime (runtimes %q): .ci/setup.d/20-docker.sh registers it when runsc installs", RuntimeRunsc, rts)
		}
		t.Skipf("the engine has no %s runtime (runtimes %q)", RuntimeRunsc, rts)
	}
	h := listenHost(t)
	inst := testInstance(t, e, InstanceConfig{Image: images(t, e).tools, Runtime: RuntimeRunsc})
	p, err := inst.Open(context.Background(), ProcessSpec{Argv: []string{"sh", "-c", "cat; dmesg | head -n 1; id -u; ls /sys/class/net; echo err >&2; exit 5"}})
	if err != nil {
		t.Fatal(err)
	}
	if ev := p.Evidence(); ev.Runtime != RuntimeRunsc || ev.NetworkMode != "none" || !ev.ReadonlyRootfs {
		t.Errorf("evidence %+v, want runtime runsc, network none, read-only root", ev)
	}
	r := finish(t, p, "in\n")
	if !strings.HasPrefix(r.stdout, "in\n") || !strings.Contains(r.stdout, "gVisor") || !strings.Contains(r.stdout, "\n65534\n") || r.stderr != "err\n" || r.code != 5 {
		t.Fatalf("under gVisor: stdout %q stderr %q code %d", r.stdout, r.stderr, r.code)
	}
	gw := fmt.Sprintf("198.19.0.1:%d", h.port)
	got := probes(t, run(t, inst, "", "cfprobe", "tcp:"+gw, "udp:"+gw))
	for c, g := range got {
		if !strings.HasPrefix(g, "blocked") {
			t.Errorf("under gVisor, network none: %s %s, want blocked", c, g)
		}
	}
	if s := h.from(""); len(s) != 0 {
		t.Errorf("host listener reached: %q", s)
	}
}
