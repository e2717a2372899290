package docker

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/adapters"
)

// TestCreateWithBroker: an instance made with a broker directory sees it,
// read-only, at BrokerMount in every process, and its evidence still
// matches (the mounts axis is the plan); one made with Create sees no
// such directory. An empty directory is refused.
func TestCreateWithBroker(t *testing.T) {
	p := testProvider(t, RuntimeRunc)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := p.CreateWithBroker(ctx, p.Spec("cf-broker-none", ""), ""); !errors.Is(err, checkfu.CodeConfigInvalid) {
		t.Fatalf("CreateWithBroker(\"\") = %v, want %s", err, checkfu.CodeConfigInvalid)
	}
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "marker"), []byte("plane"), 0o644); err != nil {
		t.Fatal(err)
	}
	sh := []string{"/bin/sh", "-c", "cat " + p.BrokerPath() + "/marker; touch " + p.BrokerPath() + "/w 2>/dev/null && echo writable"}
	for _, c := range []struct {
		name   string
		create func(adapters.InstanceSpec) (adapters.Instance, error)
		want   string
	}{
		{"with broker", func(s adapters.InstanceSpec) (adapters.Instance, error) { return p.CreateWithBroker(ctx, s, dir) }, "plane"},
		{"without", func(s adapters.InstanceSpec) (adapters.Instance, error) { return p.Create(ctx, s) }, ""},
	} {
		spec := p.Spec("cf-broker-"+strings.ReplaceAll(c.name, " ", "-"), "")
		inst, err := c.create(spec)
		if err != nil {
			t.Fatal(err)
		}
		defer inst.Destroy(context.Background())
		proc, err := inst.OpenProcess(ctx, adapters.ProcessSpec{Argv: sh})
		if err != nil {
			t.Fatal(err)
		}
		go io.Copy(io.Discard, proc.Stderr())
		out, _ := io.ReadAll(proc.Stdout())
		proc.Wait()
		if got := strings.TrimSpace(string(out)); got != c.want {
			t.Errorf("%s: the process saw %q, want %q", c.name, got, c.want)
		}
		if m := adapters.MatchEvidence(adapters.HeldFor(p.Describe(), spec), proc.Evidence()); !m.OK() {
			t.Errorf("%s: %v", c.name, m.Err())
		}
	}
}
