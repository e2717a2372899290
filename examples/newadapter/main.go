//go:build unix

// Command newadapter is a new sandbox provider adapter, written against
// package adapters, and what the Runner does with it: check its
// Description, create an instance, run a process in it, and judge the
// process's evidence with adapters.MatchEvidence. adapter.go is the
// adapter; adapter_test.go runs the conformance suite adaptertest on it.
//
// The adapter (the "scratch" provider) runs each process as a local
// process in the instance's own temporary directory with a cleared
// environment. That is hygiene, not isolation, and it says so: it enforces
// no axis, advertises no egress grade and labels its evidence mock.
//
//	go run ./examples/newadapter
//	go test ./examples/newadapter
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/adapters"
	"github.com/checkfu/checkfu/admission"
)

// exampleProfileDigest stands for the digest of the profile version the
// session was admitted under (admission.Published.ProfileDigest).
const exampleProfileDigest = "sha256:0000000000000000000000000000000000000000000000000000000000000000"

func main() {
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

func run(out io.Writer) error {
	ctx := context.Background()
	var p adapters.Provider = scratch{}

	// 1. The declarations, checked before the provider is used.
	d := p.Describe()
	fmt.Fprintf(out, "provider %s, placement %s\n", d.Identity, d.Placement)
	fmt.Fprintf(out, "  adapters.Check: %s; can carry an ACP agent: %s\n", outcome(adapters.Check(d)), outcome(adapters.CheckACP(d)))
	fmt.Fprintf(out, "  grade without a receipt: %s; network modes %v\n", adapters.Grade(d, nil), d.Capability.NetworkModes)
	fmt.Fprintf(out, "  enforcement: %s\n", enforcement(d.Capability.Enforcement))

	// 2. An instance, and one process in it. The Runner's environment
	// holds a variable the process must never see.
	if err := os.Setenv("RUNNER_ONLY_EXAMPLE", "the Runner's own"); err != nil {
		return err
	}
	spec := adapters.InstanceSpec{ID: "session-1", Platform: scratchPlatform, ProfileDigest: exampleProfileDigest, NetworkMode: scratchNetwork}
	inst, err := p.Create(ctx, spec)
	if err != nil {
		return err
	}
	defer inst.Destroy(ctx)
	proc, err := inst.OpenProcess(ctx, adapters.ProcessSpec{Argv: []string{"/bin/sh", "-c", "env"}, Env: []string{"GREETING=hello"}})
	if err != nil {
		return err
	}
	proc.Stdin().Close()
	go io.Copy(io.Discard, proc.Stderr()) //nolint:errcheck // ends with the process
	env, err := io.ReadAll(proc.Stdout())
	if err != nil {
		return err
	}
	status, err := proc.Wait()
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "process in %s: exit %d, environment %v\n", inst.ID(), status, names(string(env)))

	// 3. The evidence, judged against the state the Runner holds. The
	// assurance is isolation_checked because the provider is in-process
	// (the Runner authored the capability it is compared with); it says
	// what the comparison means, not that anything is isolated.
	held := adapters.HeldFor(d, spec)
	ev := proc.Evidence()
	m := adapters.MatchEvidence(held, ev)
	fmt.Fprintf(out, "evidence: label %s, match %s, assurance %s\n", ev.Label, outcome(m.Err()), m.Assurance)

	// Evidence that names another instance and claims a network filter
	// the capability does not: every failed clause is reported.
	lie := ev
	lie.Instance = "session-2"
	lie.Enforcement[admission.AxisNetworkPolicy] = admission.ProviderAttested
	bad := adapters.MatchEvidence(held, lie)
	fmt.Fprintf(out, "lying evidence: failed %v\n  %v\n", bad.Failed, bad.Err())

	// 4. Declarations the Runner refuses: a remote provider claiming an
	// axis is runner_enforced (only the in-process Runner can be).
	wrong := d
	wrong.Placement = admission.PlacementRemote
	wrong.Capability.Enforcement[admission.AxisLifetime] = admission.RunnerEnforced
	fmt.Fprintf(out, "remote provider claiming runner_enforced: %s\n", outcome(adapters.Check(wrong)))
	return nil
}

// names returns the sorted variable names of env's "K=V" lines.
func names(env string) []string {
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(env), "\n") {
		if k, _, ok := strings.Cut(line, "="); ok {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// enforcement lists the authority of every axis.
func enforcement(e admission.Enforcement) string {
	var parts []string
	for _, a := range admission.Axes() {
		parts = append(parts, a.String()+"="+e[a].String())
	}
	return strings.Join(parts, " ")
}

// outcome is "ok", or the refusal's codes, outermost first.
func outcome(err error) string {
	if err == nil {
		return "ok"
	}
	var codes []string
	for e := err; e != nil; {
		r, ok := e.(*checkfu.Refusal)
		if !ok {
			break
		}
		codes = append(codes, string(r.Code))
		e = r.Err
	}
	if len(codes) == 0 {
		return "error: " + err.Error()
	}
	return "refused: " + strings.Join(codes, " <- ")
}
