package docker_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"strings"

	"github.com/checkfu/checkfu/adapters"
	"github.com/checkfu/checkfu/adapters/docker"
)

// Connect finds the engine as the docker CLI does (DOCKER_HOST, then
// /var/run/docker.sock). These examples need a running engine, so they
// are compiled but not run by go test.
func ExampleConnect() {
	ctx := context.Background()
	e, err := docker.Connect(ctx, docker.Options{Label: "example.owner=me"})
	if err != nil {
		log.Fatal(err) // engine_unreachable when nothing answers
	}
	defer e.Close()
	fmt.Println("engine", e.EngineVersion(), "API", e.APIVersion())
}

// BusyboxImage builds a minimal image without any registry, cached by
// content, so a second call only looks it up.
func ExampleEngine_BusyboxImage() {
	ctx := context.Background()
	e, err := docker.Connect(ctx, docker.Options{})
	if err != nil {
		log.Fatal(err)
	}
	ref, err := e.BusyboxImage(ctx, docker.ImageOptions{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(ref) // checkfu-busybox:<content hash>
}

// An instance with the default policy "none" runs one process at a time,
// with stdin, separate stdout and stderr and an exit code.
func ExampleEngine_CreateInstance() {
	ctx := context.Background()
	e, err := docker.Connect(ctx, docker.Options{})
	if err != nil {
		log.Fatal(err)
	}
	img, err := e.BusyboxImage(ctx, docker.ImageOptions{})
	if err != nil {
		log.Fatal(err)
	}
	inst, err := e.CreateInstance(ctx, docker.InstanceConfig{Image: img})
	if err != nil {
		log.Fatal(err)
	}
	defer inst.Destroy(ctx)
	p, err := inst.Open(ctx, docker.ProcessSpec{Argv: []string{"sh", "-c", "tr a-z A-Z; exit 3"}})
	if err != nil {
		log.Fatal(err)
	}
	io.WriteString(p.Stdin(), "hello\n")
	p.Stdin().Close()
	go io.Copy(os.Stderr, p.Stderr())
	io.Copy(os.Stdout, p.Stdout()) // HELLO
	code, err := p.Wait()
	fmt.Println(code, err, p.Evidence().NetworkMode) // 3 <nil> none
}

// An allowlist topology puts the workload behind a guard running
// `checkfu guard`; the guard image holds a static checkfu binary.
func ExampleEngine_NewAllowlist() {
	ctx := context.Background()
	e, err := docker.Connect(ctx, docker.Options{})
	if err != nil {
		log.Fatal(err)
	}
	bin := os.TempDir() + "/checkfu-static"
	if err := docker.BuildStatic(ctx, ".", "./cmd/checkfu", bin); err != nil {
		log.Fatal(err)
	}
	guard, err := e.GuardImage(ctx, bin)
	if err != nil {
		log.Fatal(err)
	}
	a, err := e.NewAllowlist(ctx, docker.AllowlistConfig{
		Slot:       7, // 198.18.14.0/24 inside, 198.18.15.0/24 outside
		Policy:     []byte(`{"type":"allowlist","allowed_hosts":["example.com:443"]}`),
		GuardImage: guard,
	})
	if err != nil {
		log.Fatal(err)
	}
	defer a.Close(ctx)
	img, _ := e.BusyboxImage(ctx, docker.ImageOptions{})
	inst, err := e.CreateInstance(ctx, docker.InstanceConfig{Image: img, Allowlist: a})
	if err != nil {
		log.Fatal(err)
	}
	defer inst.Destroy(ctx)
	fmt.Println("proxy at", a.GuardAddr()) // 198.18.14.2:3128, in http_proxy
}

// NewProvider wraps the engine in the adapters contract: the Runner's
// in-process Docker provider, network mode none, one fixed image. Each
// process's evidence is the engine's read-back, and passes
// adapters.MatchEvidence against what the Runner asked.
func ExampleEngine_NewProvider() {
	ctx := context.Background()
	e, err := docker.Connect(ctx, docker.Options{})
	if err != nil {
		log.Fatal(err)
	}
	img, err := e.BusyboxImage(ctx, docker.ImageOptions{})
	if err != nil {
		log.Fatal(err)
	}
	p, err := e.NewProvider(ctx, docker.ProviderConfig{Image: img}) // Runtime: docker.RuntimeRunsc for the gVisor tier
	if err != nil {
		log.Fatal(err)
	}
	spec := p.Spec("session-1", "sha256:"+strings.Repeat("0", 64))
	inst, err := p.Create(ctx, spec)
	if err != nil {
		log.Fatal(err)
	}
	defer inst.Destroy(ctx)
	proc, err := inst.OpenProcess(ctx, adapters.ProcessSpec{Argv: []string{"true"}})
	if err != nil {
		log.Fatal(err)
	}
	m := adapters.MatchEvidence(adapters.HeldFor(p.Describe(), spec), proc.Evidence())
	proc.Stdin().Close()
	io.Copy(io.Discard, proc.Stdout())
	code, _ := proc.Wait()
	fmt.Println(p.Describe().Identity, code, m.OK(), m.Assurance) // checkfu:docker-provider@1 0 true isolation_checked
}
