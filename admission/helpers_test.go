package admission_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/admission"
)

const imageDigest = "sha256:1111111111111111111111111111111111111111111111111111111111111111"

// profileDoc returns a valid profile document with network policy np.
func profileDoc(ecosystems, np string) string {
	eco := ""
	if ecosystems != "" {
		eco = `"ecosystems": ` + ecosystems + `, `
	}
	return `{"name": "p", "image": {"ref": "docker.io/library/python:3.12", "digest": "` + imageDigest + `"}, ` +
		`"resources": {"cpu_millis": 1000, "memory_mib": 512}, ` + eco + `"network_policy": ` + np + `}`
}

func mustProfile(t testing.TB, doc string) *admission.SandboxProfile {
	t.Helper()
	p, err := admission.ParseProfile([]byte(doc))
	if err != nil {
		t.Fatalf("ParseProfile(%s): %v", doc, err)
	}
	return p
}

func mustPublish(t testing.TB, prev *admission.Published, doc string) *admission.Published {
	t.Helper()
	v, err := admission.Publish(prev, mustProfile(t, doc), nil)
	if err != nil {
		t.Fatalf("Publish(%s): %v", doc, err)
	}
	return v
}

func readFixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// wantCode fails unless err is a *checkfu.Refusal matching code.
func wantCode(t testing.TB, what string, err error, code checkfu.Code) {
	t.Helper()
	var r *checkfu.Refusal
	if !errors.As(err, &r) || !errors.Is(err, code) {
		t.Errorf("%s: err = %v, want refusal %s", what, err, code)
	}
}
