package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/conformance"
	"github.com/checkfu/checkfu/conformance/matrix"
)

func TestMatrixCommandLine(t *testing.T) {
	tests := []struct {
		args       []string
		code       int
		stdout     string
		stderrCode string
	}{
		{[]string{"matrix"}, exitUsage, "", ""},
		{[]string{"matrix", "-out", "x.json", "extra"}, exitUsage, "", ""},
		{[]string{"matrix", "-provider", "checkfu:nobody", "-out", "x.json"}, exitFailed, "", "matrix_provider_missing"},
		{[]string{"matrix", "-provider", "checkfu:e2b-provider", "-out", "x.json"}, exitFailed, "authority_separation", "provider_incapable"},
		{[]string{"matrix", "tool"}, exitUsage, "", ""},
		{[]string{"matrix", "tool", "nothing"}, exitFailed, "", ""},
	}
	for _, tt := range tests {
		stdout, stderr, code := runCLI(t, "", tt.args...)
		if code != tt.code || !strings.Contains(stdout, tt.stdout) || !strings.Contains(stderr, "code: "+tt.stderrCode) && tt.stderrCode != "" {
			t.Errorf("checkfu %v: exit %d, stdout %q, stderr %q; want exit %d, stdout with %q, code %q", tt.args, code, stdout, stderr, tt.code, tt.stdout, tt.stderrCode)
		}
	}
	stdout, _, _ := runCLI(t, "", "matrix", "-provider", "checkfu:e2b-provider", "-out", "x.json")
	if !strings.Contains(stdout, "grade: advisory_filter") {
		t.Errorf("e2b: %q does not report advisory_filter", stdout)
	}
}

// TestMatrixToolProbe runs the workload's probe in-process against a
// closed loopback port.
func TestMatrixToolProbe(t *testing.T) {
	stdout, stderr, code := runCLI(t, `[{"id":"closed","kind":"tcp","addr":"127.0.0.1:1"}]`, "matrix", "tool", "probe")
	if code != exitOK {
		t.Fatalf("probe: exit %d: %s", code, stderr)
	}
	var seen []matrix.Seen
	if err := json.Unmarshal([]byte(stdout), &seen); err != nil || len(seen) != 1 || seen[0].ID != "closed" || seen[0].Reached {
		t.Errorf("probe wrote %q (%v), want one blocked observation", stdout, err)
	}
}

// TestMatrixStatementIsSignable writes a statement the way checkfu matrix
// does and signs it with checkfu receipt sign.
func TestMatrixStatementIsSignable(t *testing.T) {
	dir := t.TempDir()
	ev := json.RawMessage(`{"case":"x"}`)
	rep := &matrix.Report{
		Target:   checkfu.ProviderRevision{Provider: matrix.DockerProvider, Revision: "1"},
		Topology: json.RawMessage(`{}`), TopoSum: conformance.DigestOf([]byte(`{}`)),
		Cases: []matrix.Case{{Fact: conformance.DefaultDeny, Name: "x", Verdict: matrix.Pass, Evidence: ev, Digest: conformance.DigestOf(ev)}},
	}
	out := filepath.Join(dir, "statement.json")
	if err := writeStatement(rep, out, ""); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out + ".evidence.json")
	if err != nil {
		t.Fatal(err)
	}
	var back matrix.Report
	if err := json.Unmarshal(b, &back); err != nil || matrix.VerifyEvidence(&back) != nil {
		t.Errorf("the evidence file does not verify: %v", err)
	}
	key := filepath.Join(dir, "key.pem")
	if _, stderr, code := runCLI(t, "", "attester", "keygen", "-out", key); code != exitOK {
		t.Fatalf("keygen: %s", stderr)
	}
	stdout, stderr, code := runCLI(t, "", "receipt", "sign", "-key", key, "-statement", out, "-out", filepath.Join(dir, "receipt.json"))
	if code != exitOK || !strings.Contains(stderr, "labelled isolated") {
		t.Errorf("receipt sign: exit %d, %s %s", code, stdout, stderr)
	}
}

// TestMatrixSummary: the -json summary lists each fact once, in the
// order of its first case, with the first case that kept it from
// holding.
func TestMatrixSummary(t *testing.T) {
	rep := &matrix.Report{
		Target: checkfu.ProviderRevision{Provider: matrix.DockerProvider, Revision: "1"}, WallTime: "2s",
		Cases: []matrix.Case{
			{Fact: conformance.DefaultDeny, Name: "a", Verdict: matrix.Pass},
			{Fact: conformance.ExactDestinationMatch, Name: "b", Verdict: matrix.Pass},
			{Fact: conformance.ExactDestinationMatch, Name: "c", Verdict: matrix.Fail, Why: "reached evil.example"},
			{Fact: conformance.DefaultDeny, Name: "d", Verdict: matrix.Pass},
		},
	}
	got, _ := json.Marshal(summarize(rep, "29.0", "s.json"))
	want := `{"provider":"checkfu:docker-provider","revision":"1","engine":"29.0","facts":[{"fact":"default_deny","held":true},` +
		`{"fact":"exact_destination_match","held":false,"case":"c","verdict":"fail","why":"reached evil.example"}],` +
		`"complete":false,"cases":4,"wall_time":"2s","statement":"s.json"}`
	if string(got) != want {
		t.Errorf("summary =\n%s\nwant\n%s", got, want)
	}
}
