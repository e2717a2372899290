package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/adapters"
	"github.com/checkfu/checkfu/adapters/docker"
	"github.com/checkfu/checkfu/adapters/jail"
	"github.com/checkfu/checkfu/admission"
	"github.com/checkfu/checkfu/runner"
	"github.com/checkfu/checkfu/signing"
)

// dockerAgentPath is where the agent binary sits in the docker image.
const dockerAgentPath = "/usr/local/bin/quickstart"

// provider returns the provider named by -provider, its enrollment when
// the Runner cannot enroll it itself, and what stops it.
func provider(ctx context.Context, o options, w io.Writer, agentsDir string) (runner.Provider, *admission.Enrollment, func(), error) {
	name := o.provider
	switch name {
	case "process":
		return runner.Process(), nil, func() {}, nil
	case "process-wire":
		p := runner.ProcessWire()
		e, err := enroll(p.Describe())
		return p, e, func() {}, err
	case "docker":
		p, stop, err := dockerProvider(ctx, o, w)
		return p, nil, stop, err
	case "jail":
		p, err := jailProvider(agentsDir)
		if err != nil {
			fmt.Fprintf(w, "quickstart: no jail here, falling back to process: %v\n", err)
			return runner.Process(), nil, func() {}, nil
		}
		return p, nil, func() {}, nil
	}
	return nil, nil, nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "quickstart: -provider %s is not jail, process, process-wire or docker", checkfu.Quote(name))
}

// jailAgentPath is where the agent (this binary) sits in a jail.
const jailAgentPath = jail.BindRoot + "/quickstart"

// jailProvider is the jail provider with this binary bound in every
// jail as the agent, the real agents' install directory agentsDir (when
// not empty) bound read-only at jailAgentsPath, and the reference guard
// deciding every request of an allowlist instance.
func jailProvider(agentsDir string) (*jail.Provider, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	binds := []jail.Bind{{Source: exe, Target: jailAgentPath}}
	if root := thirdPartyRoot(thirdPartyArgv()); root != "" {
		binds = append(binds, jail.Bind{Source: root, Target: jailThirdPartyPath})
	}
	if agentsDir != "" {
		binds = append(binds, jail.Bind{Source: agentsDir, Target: jailAgentsPath})
	}
	return jail.New(jail.Config{
		Binds: binds,
		Guard: jail.LocalGuard(jail.GuardOptions{}),
	})
}

// jailThirdPartyPath is where the third-party agent's directory (its
// script and its node_modules) is bound, read-only, in a jail.
const jailThirdPartyPath = jail.BindRoot + "/acp-agent"

// thirdPartyArgv is the command of the third-party ACP agent the acp
// tests' environment names, or nil.
func thirdPartyArgv() []string {
	cmd := os.Getenv("CHECKFU_TEST_ACP_SDK_AGENT")
	if cmd == "" {
		cmd = os.Getenv("CHECKFU_TEST_ACP_AGENT")
	}
	return strings.Fields(cmd)
}

// thirdPartyRoot is the directory that holds the agent's script and
// packages: the parent of the node_modules its last argument is in, or
// that argument's directory; "" for no agent or a relative path.
func thirdPartyRoot(argv []string) string {
	if len(argv) < 2 || !filepath.IsAbs(argv[len(argv)-1]) {
		return ""
	}
	script := filepath.Clean(argv[len(argv)-1])
	if before, _, ok := strings.Cut(script, string(filepath.Separator)+"node_modules"+string(filepath.Separator)); ok {
		return before
	}
	return filepath.Dir(script)
}

// inJail rewrites the arguments of argv that lie under root to where
// root is bound in a jail.
func inJail(argv []string, root string) []string {
	out := slices.Clone(argv)
	for k, a := range out {
		if rel, err := filepath.Rel(root, a); err == nil && filepath.IsAbs(a) && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			out[k] = filepath.Join(jailThirdPartyPath, rel)
		}
	}
	return out
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
// the scripted agent. Nothing is pulled. Everything the run creates
// carries a label of its own, and stop removes it unless -keep.
func dockerProvider(ctx context.Context, o options, w io.Writer) (runner.Provider, func(), error) {
	run := make([]byte, 6)
	rand.Read(run)
	label := "checkfu.quickstart=" + hex.EncodeToString(run)
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	e, err := docker.Connect(cctx, docker.Options{Label: label, NamePrefix: o.namePrefix})
	if err != nil {
		return nil, nil, err
	}
	stop := func() {
		if !o.keep {
			rctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if n, err := e.RemoveLabelled(rctx); err != nil {
				fmt.Fprintf(w, "docker: removing what the run created (label %s): %v\n", label, err)
			} else if n > 0 {
				fmt.Fprintf(w, "docker: removed what the run created: %d objects labelled %s (-keep keeps them)\n", n, label)
			}
		}
		e.Close()
	}
	mod, err := moduleRoot()
	if err != nil {
		stop()
		return nil, nil, err
	}
	began := time.Now()
	tmp, err := os.MkdirTemp("", "checkfu-quickstart-agent-")
	if err != nil {
		stop()
		return nil, nil, err
	}
	defer os.RemoveAll(tmp)
	bin := filepath.Join(tmp, "quickstart")
	err = during(ctx, w, "building the agent (go build, static, linux)", func() error {
		return docker.BuildStatic(ctx, mod, "./examples/quickstart", bin)
	})
	if err != nil {
		stop()
		return nil, nil, err
	}
	var img string
	err = during(ctx, w, "building the agent image (busybox-static; the first run downloads it with apt-get)", func() error {
		var err error
		img, err = e.BusyboxImage(ctx, docker.ImageOptions{Binaries: map[string]string{dockerAgentPath: bin}})
		return err
	})
	if err != nil {
		stop()
		return nil, nil, err
	}
	p, err := e.NewProvider(ctx, docker.ProviderConfig{Image: img})
	if err != nil {
		stop()
		return nil, nil, err
	}
	fmt.Fprintf(w, "docker: engine %s, agent image %s built in %s (NetworkMode none; the broker socket in a directory only the plane serves, mounted read-only at %s)\n", e.EngineVersion(), img, time.Since(began).Round(time.Millisecond), docker.BrokerMount)
	return p, stop, nil
}

// progressEvery is how often during prints that a long step still runs.
const progressEvery = 10 * time.Second

// during runs f, printing what it does first and then, every
// progressEvery until it returns, that it is still at it.
func during(ctx context.Context, w io.Writer, what string, f func() error) error {
	began := time.Now()
	fmt.Fprintf(w, "docker: %s ...\n", what)
	done := make(chan struct{})
	ticked := make(chan struct{})
	go func() {
		defer close(ticked)
		t := time.NewTicker(progressEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				fmt.Fprintf(w, "docker: still %s (%s)\n", what, time.Since(began).Round(time.Second))
			}
		}
	}()
	err := f()
	close(done)
	<-ticked
	if err == nil {
		fmt.Fprintf(w, "docker: done %s in %s\n", what, time.Since(began).Round(time.Millisecond))
	}
	return err
}

// errOutsideModule: -provider docker builds the agent from the module's
// source, and the working directory is not inside the module.
var errOutsideModule = errors.New("quickstart: -provider docker builds the agent from the module's source, and the working directory is not inside the checkfu module")

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
			return "", errOutsideModule
		}
		dir = parent
	}
}
