package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/adapters/docker"
	"github.com/checkfu/checkfu/runner"
)

// dockerAgentPath is where the agent binary sits in the docker image.
const dockerAgentPath = "/usr/local/bin/quickstart"

// provider returns the provider named by -provider and what stops it.
func provider(ctx context.Context, name string, w io.Writer) (runner.Provider, func(), error) {
	switch name {
	case "process":
		return runner.Process(), func() {}, nil
	case "docker":
		return dockerProvider(ctx, w)
	}
	return nil, nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "quickstart: -provider %s is not process or docker", checkfu.Quote(name))
}

// dockerProvider connects to the engine DOCKER_HOST names and builds the
// image the agent runs in: busybox with this program, built static, as
// the scripted agent. Nothing is pulled.
func dockerProvider(ctx context.Context, w io.Writer) (runner.Provider, func(), error) {
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	e, err := docker.Connect(cctx, docker.Options{Label: docker.TestLabel})
	if err != nil {
		return nil, nil, fmt.Errorf("no Docker engine answers at DOCKER_HOST: %w", err)
	}
	mod, err := moduleRoot()
	if err != nil {
		e.Close()
		return nil, nil, err
	}
	began := time.Now()
	tmp, err := os.MkdirTemp("", "checkfu-quickstart-agent-")
	if err != nil {
		e.Close()
		return nil, nil, err
	}
	defer os.RemoveAll(tmp)
	bin := filepath.Join(tmp, "quickstart")
	if err := docker.BuildStatic(ctx, mod, "./examples/quickstart", bin); err != nil {
		e.Close()
		return nil, nil, err
	}
	img, err := e.BusyboxImage(ctx, docker.ImageOptions{Binaries: map[string]string{dockerAgentPath: bin}})
	if err != nil {
		e.Close()
		return nil, nil, err
	}
	p, err := e.NewProvider(ctx, docker.ProviderConfig{Image: img})
	if err != nil {
		e.Close()
		return nil, nil, err
	}
	fmt.Fprintf(w, "docker: engine %s, agent image built in %s (NetworkMode none; the broker socket in a directory only the plane serves, mounted read-only at %s)\n", e.EngineVersion(), time.Since(began).Round(time.Millisecond), docker.BrokerMount)
	return p, e.Close, nil
}

// moduleRoot finds the directory of the module's go.mod, from the
// working directory up.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", checkfu.Refuse(checkfu.CodeConfigInvalid, "quickstart: -provider docker builds the agent from the module; run it inside the checkfu module")
		}
		dir = parent
	}
}
