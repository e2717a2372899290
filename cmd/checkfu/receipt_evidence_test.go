package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReceiptVerifyEvidence: with -evidence, `receipt verify` says
// security_boundary only when the evidence file, read strictly, is the
// one the receipt's record names. The report is made up (mock): a
// production label is written by hand to reach the evidence check.
func TestReceiptVerifyEvidence(t *testing.T) {
	dir := t.TempDir()
	rep, receipt, set := certifiedReport(t, dir, "evidence")
	file, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	other := *rep
	other.Revision = "3"
	otherFile, _ := json.MarshalIndent(&other, "", "  ")
	tests := []struct {
		name, evidence, grade, refusal string
		code                           int
	}{
		{"its own evidence file", write("good.json", file), "grade: security_boundary", "", exitOK},
		{"evidence of another revision", write("other.json", otherFile), "grade: advisory_filter", "evidence_file_mismatch", exitFailed},
		{"a case-folded verdict", write("folded.json", []byte(strings.Replace(string(file), `"verdict": "pass"`, `"verdict": "fail", "Verdict": "pass"`, 1))), "grade: advisory_filter", "evidence_file_invalid", exitFailed},
		{"a case's evidence altered", write("altered.json", []byte(strings.Replace(string(file), `"case": "default_deny"`, `"case": "default_deny, trust me"`, 1))), "grade: advisory_filter", "record_invalid", exitFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := runCLI(t, "", "receipt", "verify", "-attesters", set, "-evidence", tt.evidence, "-provider", rep.Target.Provider, "-revision", rep.Target.Revision, receipt)
			if code != tt.code || !strings.Contains(stdout, tt.grade) {
				t.Fatalf("exit %d, want %d; stdout %q stderr %q", code, tt.code, stdout, stderr)
			}
			if tt.refusal != "" && (!strings.Contains(stdout, "refused: "+tt.refusal) || !strings.Contains(stderr, "hint: ")) {
				t.Fatalf("refusal %s not reported: stdout %q stderr %q", tt.refusal, stdout, stderr)
			}
		})
	}
}
