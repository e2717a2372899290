package matrix

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/conformance"
)

// evidenceReport returns a report with every fact held by one or two
// cases, as the file `checkfu matrix` writes reads back (indented JSON,
// Target not in the file), and the record its statement holds.
func evidenceReport(t *testing.T) (*Report, conformance.Record) {
	t.Helper()
	target := checkfu.ProviderRevision{Provider: "checkfu:docker", Revision: "1"}
	rep := &Report{Target: target, Provider: target.Provider, Revision: target.Revision, Label: checkfu.LabelIsolated.String()}
	rep.Topology = json.RawMessage(`{"guard":"10.0.0.2"}`)
	rep.TopoSum = conformance.DigestOf(rep.Topology)
	for i, f := range conformance.Facts() {
		for j := range 1 + i%2 {
			ev := json.RawMessage(`{"case":"` + string(f) + `","n":` + string(rune('0'+j)) + `}`)
			rep.Cases = append(rep.Cases, Case{Fact: f, Name: string(f) + "-" + string(rune('a'+j)), Verdict: Pass, Evidence: ev, Digest: conformance.DigestOf(ev)})
		}
	}
	rec, err := rep.Record(time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	file, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(file, &back); err != nil {
		t.Fatal(err)
	}
	return &back, rec
}

// TestMatchEvidence: a man in the middle (or a careless operator) hands
// over an evidence file with a receipt. VerifyEvidence alone accepts any
// self-consistent file; MatchEvidence accepts only the file of the
// record: the same pair, label, digests in order and held facts.
func TestMatchEvidence(t *testing.T) {
	tests := []struct {
		name   string
		edit   func(*Report, *conformance.Record)
		verify bool // VerifyEvidence still accepts the edited file
		want   checkfu.Code
	}{
		{name: "the file of the record", verify: true},
		{name: "file for another revision", edit: func(r *Report, _ *conformance.Record) { r.Revision = "2" }, verify: true, want: CodeEvidenceFileMismatch},
		{name: "file for a revision with a suffix", edit: func(r *Report, _ *conformance.Record) { r.Revision = "1 " }, verify: true, want: CodeEvidenceFileMismatch},
		{name: "file for another provider", edit: func(r *Report, _ *conformance.Record) { r.Provider = "checkfu:Docker" }, verify: true, want: CodeEvidenceFileMismatch},
		{name: "file relabelled production", edit: func(r *Report, _ *conformance.Record) { r.Label = "production" }, verify: true, want: CodeEvidenceFileMismatch},
		// The record lacks the case's fact (it failed); the file says
		// the case passed.
		{name: "a failed case marked passed", edit: func(r *Report, rec *conformance.Record) {
			rec.Facts = rec.Facts.Without(r.Cases[0].Fact)
		}, verify: true, want: CodeEvidenceFileMismatch},
		{name: "a passed case marked failed", edit: func(r *Report, _ *conformance.Record) { r.Cases[len(r.Cases)-1].Verdict = Fail }, verify: true, want: CodeEvidenceFileMismatch},
		{name: "a case dropped", edit: func(r *Report, _ *conformance.Record) { r.Cases = r.Cases[1:] }, verify: true, want: CodeEvidenceFileMismatch},
		{name: "a case added", edit: func(r *Report, _ *conformance.Record) {
			ev := json.RawMessage(`{"extra":true}`)
			r.Cases = append(r.Cases, Case{Fact: conformance.DefaultDeny, Name: "extra", Verdict: Pass, Evidence: ev, Digest: conformance.DigestOf(ev)})
		}, verify: true, want: CodeEvidenceFileMismatch},
		{name: "two cases swapped", edit: func(r *Report, _ *conformance.Record) { r.Cases[1], r.Cases[2] = r.Cases[2], r.Cases[1] }, verify: true, want: CodeEvidenceFileMismatch},
		{name: "the file of another run", edit: func(r *Report, _ *conformance.Record) {
			r.Topology = json.RawMessage(`{"guard":"10.0.0.3"}`)
			r.TopoSum = conformance.DigestOf(r.Topology)
		}, verify: true, want: CodeEvidenceFileMismatch},
		{name: "a case's evidence altered", edit: func(r *Report, _ *conformance.Record) {
			r.Cases[0].Evidence = json.RawMessage(`{"case":"altered"}`)
		}, want: conformance.CodeRecordInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep, rec := evidenceReport(t)
			if tt.edit != nil {
				tt.edit(rep, &rec)
			}
			if err := VerifyEvidence(rep); (err == nil) != tt.verify {
				t.Fatalf("VerifyEvidence = %v, want accepted %v", err, tt.verify)
			}
			err := MatchEvidence(rep, rec)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("MatchEvidence = %v, want nil", err)
				}
				return
			}
			if code, _ := checkfu.CodeOf(err); code != tt.want {
				t.Fatalf("MatchEvidence = %v, want %s", err, tt.want)
			}
		})
	}
	rep, rec := evidenceReport(t)
	rep.Revision = strings.Repeat("\u2028", 1<<16)
	if err := MatchEvidence(rep, rec); !errors.Is(err, CodeEvidenceFileMismatch) || len(err.Error()) > 512 {
		t.Errorf("MatchEvidence(huge revision) = %.200v (%d bytes), want %s in at most 512 bytes", err, len(err.Error()), CodeEvidenceFileMismatch)
	}
}

// TestParseEvidenceFile: encoding/json, the reader the evidence file
// had, lets a repeated or case-folded member win, so one file shows a
// person "fail" and a program "pass" for the same case. ParseEvidenceFile
// refuses every such file, and reads the file the matrix writes.
func TestParseEvidenceFile(t *testing.T) {
	rep, rec := evidenceReport(t)
	file, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got, err := ParseEvidenceFile(file)
	if err != nil {
		t.Fatalf("ParseEvidenceFile(the matrix's file) = %v", err)
	}
	if got.Target != rec.Target {
		t.Errorf("Target = %v, want %v", got.Target, rec.Target)
	}
	if err := MatchEvidence(got, rec); err != nil {
		t.Errorf("MatchEvidence(parsed file) = %v", err)
	}

	// Each row rewrites the last case's verdict. Read with encoding/json,
	// the first rows still match the record (all five facts) while the
	// file shows a person the case as failed.
	verdict := `"verdict": "pass"`
	last := strings.LastIndex(string(file), verdict)
	if last < 0 {
		t.Fatal("no verdict in the file")
	}
	edit := func(repl string) []byte {
		return []byte(string(file[:last]) + repl + string(file[last+len(verdict):]))
	}
	tests := []struct {
		name string
		file []byte
		lax  bool // encoding/json reads the last case as passed
	}{
		{"case-folded verdict", edit(`"verdict": "fail", "Verdict": "pass"`), true},
		{"repeated verdict", edit(`"verdict": "fail", "verdict": "pass"`), true},
		{"verdict in upper case only", edit(`"VERDICT": "pass"`), true},
		{"unknown member", edit(`"verdict": "pass", "signed": true`), true},
		{"trailing data", append(append([]byte(nil), file...), `{}`...), false},
		{"invalid UTF-8", edit(`"verdict": "pass", "why": "` + "\xff" + `"`), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var lax Report
			if err := json.Unmarshal(tt.file, &lax); tt.lax && (err != nil || MatchEvidence(&lax, rec) != nil) {
				t.Fatalf("encoding/json: %v, %v; the row no longer shows what it is for", err, MatchEvidence(&lax, rec))
			}
			if _, err := ParseEvidenceFile(tt.file); !errors.Is(err, CodeEvidenceFileInvalid) {
				t.Fatalf("ParseEvidenceFile = %v, want %s", err, CodeEvidenceFileInvalid)
			}
		})
	}

	// The size bound, at its edge: white space after the value is JSON.
	pad := func(n int) []byte { return append(append([]byte(nil), file...), strings.Repeat(" ", n-len(file))...) }
	if _, err := ParseEvidenceFile(pad(MaxEvidenceFileSize)); err != nil {
		t.Errorf("a file of MaxEvidenceFileSize bytes: %v", err)
	}
	if _, err := ParseEvidenceFile(pad(MaxEvidenceFileSize + 1)); !errors.Is(err, CodeEvidenceFileInvalid) {
		t.Errorf("a file of MaxEvidenceFileSize+1 bytes: %v, want %s", err, CodeEvidenceFileInvalid)
	}
}
