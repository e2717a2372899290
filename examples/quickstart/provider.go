package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/adapters"
	"github.com/checkfu/checkfu/adapters/docker"
	"github.com/checkfu/checkfu/admission"
	"github.com/checkfu/checkfu/runner"
	"github.com/checkfu/checkfu/signing"
)

// dockerAgentPath is where the agent binary sits in the docker image.
const dockerAgentPath = "/usr/local/bin/quickstart"

// provider returns the provider named by -provider, its enrollment when
// the Runner cannot enroll it itself, and what stops it.
func provider(ctx context.Context, name string, w io.Writer) (runner.Provider, *admission.Enrollment, func(), error) {
	switch name {
	case "process":
		return runner.Process(), nil, func() {}, nil
	case "process-wire":
		p := runner.ProcessWire()
		e, err := enroll(p.Describe())
		return p, e, func() {}, err
	case "docker":
		p, stop, err := dockerProvider(ctx, w)
		return p, nil, stop, err
	}
	return nil, nil, nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "quickstart: -provider %s is not process, process-wire or docker", checkfu.Quote(name))
}

// enroll plays the operator enrolling a remote provider: the provider
// signs its materialization statement with its own key, and the operator
// trusts that key and issues the ceiling (here, exactly what it declared).
func enroll(d adapters.Description) (*admission.Enrollment, error) {
	key, _, err := signing.GenerateSigner(nil)
	if err != nil {
		return nil, err
	}
	digest, err := admission.CapabilityDigest(d.Capability)
	if err != nil {
		return nil, err
	}
	statement, err := admission.SignMaterialization(key, admission.MaterializationStatement{
		Provider: d.Identity.Provider, ProviderRevision: d.Identity.Revision, MaterializationRevision: d.MaterializationRevision,
		Placement: d.Placement, CapabilityDigest: digest, IssuedAt: time.Now().UTC().Format(time.RFC3339),
	})
	if err != nil {
		return nil, err
	}
	set, err := json.Marshal(map[string]any{"attesters": []map[string]string{{"name": d.Identity.Provider, "public_key_pem": string(key.PublicKeyPEM())}}})
	if err != nil {
		return nil, err
	}
	signers, err := signing.ParseAttesterSet(set)
	if err != nil {
		return nil, err
	}
	return admission.Enroll(admission.EnrollmentRequest{Target: d.Identity, Placement: d.Placement,
		Declared: d.Capability, Ceiling: d.Capability, Statement: statement, Signers: signers})
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
