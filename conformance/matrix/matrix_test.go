package matrix

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/adapters/docker"
	"github.com/checkfu/checkfu/conformance"
	"github.com/checkfu/checkfu/signing"
)

// testEngine connects to the engine DOCKER_HOST names. Without one it
// skips, naming the missing engine; under CI it fails instead
// (.ci/setup.d/20-docker.sh starts one).
func testEngine(t testing.TB) *docker.Engine {
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

var (
	binOnce sync.Mutex
	binPath string
)

// testBinary builds the static checkfu binary of this tree once per test
// process, into the user cache (go build's own cache makes a rebuild a
// link).
func testBinary(t testing.TB) string {
	t.Helper()
	binOnce.Lock()
	defer binOnce.Unlock()
	if binPath != "" {
		return binPath
	}
	d, err := os.UserCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(d, "checkfu", "matrix")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "checkfu")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if err := docker.BuildStatic(ctx, "../..", "./cmd/checkfu", out); err != nil {
		t.Fatal(err)
	}
	binPath = out
	return out
}

var docker1 = checkfu.ProviderRevision{Provider: DockerProvider, Revision: "1"}

// reference runs the matrix against the reference guard topology once
// per test process.
var (
	refOnce sync.Mutex
	refRep  *Report
)

func reference(t *testing.T) *Report {
	t.Helper()
	refOnce.Lock()
	defer refOnce.Unlock()
	if refRep != nil {
		return refRep
	}
	e := testEngine(t)
	bin := testBinary(t)
	canary := NewCanary()
	t.Setenv(PlaneCredentialEnv, canary)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	rep, err := Run(ctx, Config{Engine: e, Binary: bin, Target: docker1, PlaneCredential: canary, Label: docker.TestLabel})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("matrix wall time %v, %d cases", rep.Wall().Round(time.Millisecond), len(rep.Cases))
	refRep = rep
	return rep
}

// TestMatrixReference runs the matrix against the reference guard
// topology on a real engine, signs its statement with a throwaway key,
// and verifies the receipt against a throwaway attester set and the
// built-in one.
func TestMatrixReference(t *testing.T) {
	rep := reference(t)
	for _, c := range rep.Cases {
		t.Logf("%-28s %-44s %-13s %s", c.Fact, c.Name, c.Verdict, c.Why)
		if c.Digest != conformance.DigestOf(c.Evidence) {
			t.Errorf("%s: digest %s is not the evidence's", c.Name, c.Digest)
		}
		if c.Verdict != Pass {
			t.Errorf("%s/%s: %s (%s), want pass", c.Fact, c.Name, c.Verdict, c.Why)
		}
	}
	held := rep.Held()
	if !held.Complete() {
		t.Errorf("held %s; want all five facts", held)
	}

	// The evidence file's digests are the compact form's.
	ev, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(ev, &back); err != nil {
		t.Fatal(err)
	}
	if err := VerifyEvidence(&back); err != nil {
		t.Errorf("the evidence file does not verify: %v", err)
	}

	rec, err := rep.Record(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if rec.Label != checkfu.LabelIsolated {
		t.Errorf("label %s, want isolated", rec.Label)
	}
	stmt, err := rec.Statement()
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := conformance.ParseStatement(stmt)
	if err != nil {
		t.Fatalf("the statement does not parse: %v\n%s", err, stmt)
	}
	signer, _, err := signing.GenerateSigner(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	env, err := conformance.Sign(signer, parsed)
	if err != nil {
		t.Fatal(err)
	}
	setFile, _ := json.Marshal(map[string]any{"attesters": []map[string]string{{"name": "throwaway", "public_key_pem": string(signer.PublicKeyPEM())}}})
	set, err := signing.ParseAttesterSet(setFile)
	if err != nil {
		t.Fatal(err)
	}
	// Facts are checked before the label: with every fact held the only
	// refusal left is the label; with authority_separation unheld it is
	// the missing fact.
	want := conformance.CodeLabelNotProduction
	if !held.Complete() {
		want = conformance.CodeFactMissing
	}
	if _, err := conformance.Certify(set, env, docker1); !errors.Is(err, want) {
		t.Errorf("throwaway set: %v, want %s", err, want)
	}
	// With the facts made complete, the same throwaway set refuses the
	// label and nothing else: the label check is not shadowed.
	full := parsed
	full.Facts = conformance.AllFacts()
	if env2, err := conformance.Sign(signer, full); err != nil {
		t.Fatal(err)
	} else if _, err := conformance.Certify(set, env2, docker1); !errors.Is(err, conformance.CodeLabelNotProduction) {
		t.Errorf("throwaway set, complete facts: %v, want label_not_production", err)
	}
	if _, err := conformance.Certify(conformance.BuiltinAttesters(), env, docker1); !errors.Is(err, signing.CodeAttesterUnknown) {
		t.Errorf("built-in set: %v, want attester_unknown", err)
	}
}

// TestProvidersThatCannotHold pins the table's incapable providers: each
// names the fact it cannot hold and why, and stays at advisory_filter.
func TestProvidersThatCannotHold(t *testing.T) {
	p, err := LookupProvider("checkfu:e2b-provider")
	if err != nil {
		t.Fatal(err)
	}
	if p.Runnable || p.Cannot[conformance.AuthoritySeparation] == "" || p.Ceiling() != checkfu.AdvisoryFilter {
		t.Errorf("e2b: runnable %v, cannot %v, ceiling %s; want authority_separation named and advisory_filter", p.Runnable, p.Cannot, p.Ceiling())
	}
	d, err := LookupProvider(DockerProvider)
	if err != nil || !d.Runnable || d.Ceiling() != checkfu.SecurityBoundary {
		t.Errorf("docker: %+v, %v", d, err)
	}
	if _, err := LookupProvider("checkfu:nobody"); !errors.Is(err, CodeMatrixProviderMissing) {
		t.Errorf("unknown provider: %v", err)
	}
}
