package matrix

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/checkfu/checkfu/adapters/docker"
	"github.com/checkfu/checkfu/internal/mutation"
)

// TestMutants runs, when CHECKFU_MUTANTS=1, both kinds of mutant:
//
//   - "guards": every broken guard and provider of [Mutants], each built
//     as a checkfu binary with go build -overlay and run through the
//     whole matrix on the real engine; each must be killed by a case of
//     the fact that targets it, which passed on the reference;
//   - "judges": the matrix's own checks (pkgMutants), each of which a
//     named test of this package must kill.
func TestMutants(t *testing.T) {
	t.Run("judges", func(t *testing.T) { mutation.Run(t, pkgMutants) })
	t.Run("jail", testJailMutants)
	t.Run("guards", func(t *testing.T) {
		if !mutation.Enabled() {
			t.Skip("set CHECKFU_MUTANTS=1 to run the mutants (CI does)")
		}
		ref := reference(t)
		ms := MutantsFor(DockerProvider)
		sem := make(chan struct{}, 2) // two topologies at once fit 2 cores
		var wg sync.WaitGroup
		results := make([]MutantResult, len(ms))
		errs := make([]error, len(ms))
		for i, m := range ms {
			wg.Add(1)
			go func() {
				defer wg.Done()
				sem <- struct{}{}
				defer func() { <-sem }()
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
				defer cancel()
				results[i], errs[i] = RunMutant(ctx, MutantConfig{ModuleDir: "../..", Target: docker1, Reference: ref, Label: docker.TestLabel}, m)
			}()
		}
		wg.Wait()
		for i, m := range ms {
			switch {
			case errs[i] != nil:
				t.Errorf("mutant %q: %v", m.Name, errs[i])
			case !results[i].Killed:
				t.Errorf("%s", results[i])
			default:
				t.Log(results[i])
			}
		}
	})
}

// TestJailMutants is TestMutants's "jail" part, run by it: every guard
// mutant and every jail provider mutant, built into the checkfu binary
// that is the jail's Runner and init stage, through the matrix on the
// namespace topology.
func testJailMutants(t *testing.T) {
	if !mutation.Enabled() {
		t.Skip("set CHECKFU_MUTANTS=1 to run the mutants (CI does)")
	}
	ref := jailReference(t)
	ms := MutantsFor(JailProvider)
	sem := make(chan struct{}, 2)
	var wg sync.WaitGroup
	results := make([]MutantResult, len(ms))
	errs := make([]error, len(ms))
	for i, m := range ms {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			results[i], errs[i] = RunMutant(ctx, MutantConfig{ModuleDir: "../..", Target: jail1, Reference: ref}, m)
		}()
	}
	wg.Wait()
	for i, m := range ms {
		switch {
		case errs[i] != nil:
			t.Errorf("mutant %q: %v", m.Name, errs[i])
		case !results[i].Killed:
			t.Errorf("%s", results[i])
		default:
			t.Log(results[i])
		}
	}
}

// pkgMutants delete the matrix's own checks; TestJudges must kill each.
var pkgMutants = []mutation.Mutant{
	{Name: "evidence file read with encoding/json", File: "matrix.go",
		Edits: []mutation.Edit{{Old: "if err := strictjson.Unmarshal(data, &rep, strictjson.Options{MaxBytes: MaxEvidenceFileSize}); err != nil {", New: "if err := json.Unmarshal(data, &rep); err != nil && strictjson.DefaultMaxDepth > 0 {"}},
		Kills: "TestParseEvidenceFile"},
	{Name: "evidence file of any size", File: "matrix.go",
		Edits: []mutation.Edit{{Old: "strictjson.Options{MaxBytes: MaxEvidenceFileSize}", New: "strictjson.Options{}"}},
		Kills: "TestParseEvidenceFile"},
	{Name: "evidence file's Target left empty", File: "matrix.go",
		Edits: []mutation.Edit{{Old: "\trep.Target = checkfu.ProviderRevision{Provider: rep.Provider, Revision: rep.Revision}\n", New: ""}},
		Kills: "TestParseEvidenceFile"},
	{Name: "evidence matched without its digests checked", File: "matrix.go",
		Edits: []mutation.Edit{{Old: "\tif err := VerifyEvidence(rep); err != nil {\n\t\treturn err\n\t}\n\tif rep.Provider", New: "\tif rep.Provider"}},
		Kills: "TestMatchEvidence"},
	{Name: "evidence matched to any provider revision", File: "matrix.go",
		Edits: []mutation.Edit{{Old: "if rep.Provider != rec.Target.Provider || rep.Revision != rec.Target.Revision {", New: "if false {"}},
		Kills: "TestMatchEvidence"},
	{Name: "evidence matched to any revision of the provider", File: "matrix.go",
		Edits: []mutation.Edit{{Old: "if rep.Provider != rec.Target.Provider || rep.Revision != rec.Target.Revision {", New: "if rep.Provider != rec.Target.Provider {"}},
		Kills: "TestMatchEvidence"},
	{Name: "evidence matched to any label", File: "matrix.go",
		Edits: []mutation.Edit{{Old: "if rep.Label != rec.Label.String() {", New: "if false {"}},
		Kills: "TestMatchEvidence"},
	{Name: "evidence matched to any digests", File: "matrix.go",
		Edits: []mutation.Edit{{Old: "if !slices.Equal(digests, rec.Evidence) {", New: "if len(digests) == 0 {"}},
		Kills: "TestMatchEvidence"},
	{Name: "evidence matched whatever its verdicts hold", File: "matrix.go",
		Edits: []mutation.Edit{{Old: "if held := rep.Held(); held != rec.Facts {", New: "if held := rep.Held(); false && held != rec.Facts {"}},
		Kills: "TestMatchEvidence"},
	{Name: "a refused case ignores what reached the listener", File: "cases.go",
		Edits: []mutation.Edit{{Old: "\tcase len(hits) > 0:\n\t\treturn Fail, fmt.Sprintf(\"reached the live listener %s (status %d)\", hits[0].Listener, st.Status), ev", New: "\tcase false:\n\t\treturn Fail, \"\", ev"}},
		Kills: "TestJudges"},
	{Name: "any 403 counts as a refusal", File: "cases.go",
		Edits: []mutation.Edit{{Old: `case st.Status != 403 || st.Refusal == "":`, New: `case st.Status != 403:`}},
		Kills: "TestJudges"},
	{Name: "an upstream failure counts as a refusal", File: "cases.go",
		Edits: []mutation.Edit{{Old: `case st.Status != 403 || st.Refusal == "":`, New: `case st.Status != 403 && st.Status != 502:`}},
		Kills: "TestJudges"},
	{Name: "the dead-port control accepts a denial", File: "cases.go",
		Edits: []mutation.Edit{{Old: `if st.Status == 502 && st.Upstream != "" && st.Refusal == "" {`, New: `if st.Status == 502 || st.Status == 403 {`}},
		Kills: "TestJudges"},
	{Name: "the redirect target is not looked at", File: "cases.go",
		Edits: []mutation.Edit{{Old: "\tcase len(hits) > 0:\n\t\treturn Fail, fmt.Sprintf(\"the redirect target was reached", New: "\tcase false:\n\t\treturn Fail, fmt.Sprintf(\"the redirect target was reached"}},
		Kills: "TestJudges"},
	{Name: "the redirector need not be reached", File: "cases.go",
		Edits: []mutation.Edit{{Old: "\tcase len(redirector) == 0:", New: "\tcase false:"}},
		Kills: "TestJudges"},
	{Name: "the flip counts private hits as passes", File: "cases.go",
		Edits: []mutation.Edit{{Old: "\tcase len(priv) > 0:\n\t\treturn Fail, fmt.Sprintf(\"reached the private listener %s after a public answer\"", New: "\tcase false:\n\t\treturn Fail, fmt.Sprintf(\"reached the private listener %s after a public answer\""}},
		Kills: "TestJudges"},
	{Name: "an unexercised flip passes", File: "cases.go",
		Edits: []mutation.Edit{{Old: "\tcase refused == 0 || len(queries) < 2:", New: "\tcase false:"}},
		Kills: "TestJudges"},
	{Name: "a direct route is not looked at", File: "cases.go",
		Edits: []mutation.Edit{{Old: "\t\tif r.seen[c.ID].Reached {\n\t\t\treturn Fail, \"reached \"", New: "\t\tif false {\n\t\t\treturn Fail, \"reached \""}},
		Kills: "TestJudges"},
	{Name: "the host listener is not looked at", File: "cases.go",
		Edits: []mutation.Edit{{Old: "\t\tif len(from) > 0 {\n\t\t\treturn Fail, \"the host listener recorded \"", New: "\t\tif false {\n\t\t\treturn Fail, \"the host listener recorded \""}},
		Kills: "TestJudges"},
	{Name: "the owned DNS log is not looked at", File: "cases.go",
		Edits: []mutation.Edit{{Old: `if c.Kind == "dns" && r.asked(c.Name) {`, New: `if false {`}},
		Kills: "TestJudges"},
	{Name: "the tunnel is not looked at", File: "cases.go",
		Edits: []mutation.Edit{{Old: "\tcase o.Asked:\n", New: "\tcase false:\n"}},
		Kills: "TestJudges"},
	{Name: "the tunnel's answer is not read", File: "cases.go",
		Edits: []mutation.Edit{{Old: "\tcase a != nil && (len(a.A) > 0 || a.Records > 0):", New: "\tcase false:"}},
		Kills: "TestJudges"},
	{Name: "the tunnel passes without its control", File: "cases.go",
		Edits: []mutation.Edit{{Old: "\tcase !o.ControlRan:", New: "\tcase false:"}},
		Kills: "TestJudges"},
	{Name: "the tunnel passes on a blind control", File: "cases.go",
		Edits: []mutation.Edit{{Old: "\tcase !o.ControlAsked || o.Control.DNS == nil || !slices.Contains(o.Control.DNS.A, o.Sentinel):", New: "\tcase false && slices.Contains(o.Control.DNS.A, o.Sentinel):"}},
		Kills: "TestJudges|TestHostDNSTunnelLoopback"},
	{Name: "the tunnel passes on any response code", File: "cases.go",
		Edits: []mutation.Edit{{Old: "\tcase a.RCode != dnsmessage.RCodeNameError.String() && a.RCode != dnsmessage.RCodeRefused.String() && a.RCode != dnsmessage.RCodeServerFailure.String():", New: "\tcase false && a.RCode != dnsmessage.RCodeNameError.String():"}},
		Kills: "TestJudges"},
	{Name: "the probe does not decode the DNS reply", File: "tool.go",
		Edits: []mutation.Edit{{Old: "\t\t\ts.DNS = &a\n", New: "\t\t\t_ = a\n"}},
		Kills: "TestHostDNSTunnelLoopback"},
	{Name: "the owned DNS answers no sentinel", File: "tool.go",
		Edits: []mutation.Edit{{Old: "\t\t} else if z.sentinel.under(name) {", New: "\t\t} else if false {"}},
		Kills: "TestHostDNSTunnelLoopback"},
	{Name: "the decoder ignores the reply's ID", File: "dnsanswer.go",
		Edits: []mutation.Edit{{Old: "if !h.Response || h.ID != qh.ID {", New: "if _ = qh; !h.Response {"}},
		Kills: "TestDecodeAnswer"},
	{Name: "the decoder reads past its bound", File: "dnsanswer.go",
		Edits: []mutation.Edit{{Old: "\t\tif a.Records == maxDNSAnswers {", New: "\t\tif a.Records == -1 {"}},
		Kills: "TestDecodeAnswer"},
	{Name: "the canary is not looked for in the environment", File: "cases.go",
		Edits: []mutation.Edit{{Old: "\t\t\tif strings.Contains(e, canary) {\n\t\t\t\twhere = \"environment\"", New: "\t\t\tif strings.Contains(e, canary) && false {\n\t\t\t\twhere = \"environment\""}},
		Kills: "TestJudges"},
	{Name: "the evidence is not redacted", File: "cases.go",
		Edits: []mutation.Edit{{Old: `ev := map[string]any{"container": redact(v, canary)}`, New: `ev := map[string]any{"container": v}`}},
		Kills: "TestJudges"},
	{Name: "writable mounts pass", File: "cases.go",
		Edits: []mutation.Edit{{Old: "\t\t\tif m.RW {", New: "\t\t\tif false {"}},
		Kills: "TestJudges"},
	{Name: "the canary is not looked for in files", File: "cases.go",
		Edits: []mutation.Edit{{Old: "\t\tcase len(sc.Found) > 0:", New: "\t\tcase false:"}},
		Kills: "TestJudges"},
	{Name: "no files read passes", File: "cases.go",
		Edits: []mutation.Edit{{Old: `case sc.Err != "" || sc.Files == 0:`, New: `case sc.Err != "":`}},
		Kills: "TestJudges"},
	{Name: "routing headers are not looked at", File: "cases.go",
		Edits: []mutation.Edit{{Old: "\t\t\tif _, ok := h.Header[k]; ok {", New: "\t\t\tif _, ok := h.Header[k]; ok && false {"}},
		Kills: "TestJudges"},
	{Name: "the Host header is not looked at", File: "cases.go",
		Edits: []mutation.Edit{{Old: "\t\tif h.Host != admitted+\":8080\" {\n\t\t\treturn Fail, \"the listener received Host \"", New: "\t\tif false {\n\t\t\treturn Fail, \"the listener received Host \""}},
		Kills: "TestJudges"},
	{Name: "the broker workload's output is not searched for the canary", File: "cases.go",
		Edits: []mutation.Edit{{Old: "\tcase strings.Contains(string(r.brokerOut), r.cfg.PlaneCredential):", New: "\tcase false:"}},
		Kills: "TestJudges"},
	{Name: "the credential need not be attached at the plane", File: "cases.go",
		Edits: []mutation.Edit{{Old: "\tcase len(r.planeHits) != 1 || attached != 1:", New: "\tcase len(r.planeHits) != 1:"}},
		Kills: "TestJudges"},
	{Name: "plane traffic may come through the guard", File: "cases.go",
		Edits: []mutation.Edit{{Old: "if err != nil || !ap.Addr().IsLoopback() {", New: "if err != nil || !ap.IsValid() {"}},
		Kills: "TestJudges"},
	{Name: "the guard's log is not read for plane traffic", File: "cases.go",
		Edits: []mutation.Edit{{Old: "\tcase strings.Contains(r.guardLogs, planeHost):", New: "\tcase false:"}},
		Kills: "TestJudges"},
	{Name: "the capability-enabled workload may have a network", File: "cases.go",
		Edits: []mutation.Edit{{Old: `case len(r.brokerView.Networks) != 1 || r.brokerView.NetworkMode != "none":`, New: `case false:`}},
		Kills: "TestJudges"},
	{Name: "the acp/wire hop is assumed", File: "cases.go",
		Edits: []mutation.Edit{{Old: "if r.planeErr != nil || !r.overWire {", New: "if r.planeErr != nil {"}},
		Kills: "TestJudges"},
	{Name: "a jail's writable host mount passes", File: "jail.go",
		Edits: []mutation.Edit{{Old: "\t\t\tif m.RW && !jailWritable(m) {", New: "\t\t\tif false {"}},
		Kills: "TestJailJudges"},
	{Name: "any device mount counts as the jail's own", File: "jail.go",
		Edits: []mutation.Edit{{Old: "return jailDevices[m.Point] && m.Root == strings.TrimPrefix(m.Point, \"/dev\")", New: "return true"}},
		Kills: "TestJailJudges"},
	{Name: "a jail's environment is not searched", File: "jail.go",
		Edits: []mutation.Edit{{Old: "\t\t\tif strings.Contains(e, canary) {\n\t\t\t\twhere = \"environment\"", New: "\t\t\tif strings.Contains(e, canary) && false {\n\t\t\t\twhere = \"environment\""}},
		Kills: "TestJailJudges"},
	{Name: "the guard's compiled options are not searched", File: "jail.go",
		Edits: []mutation.Edit{{Old: "\tcase bytes.Contains(opts, []byte(r.cfg.PlaneCredential)):", New: "\tcase false:"}},
		Kills: "TestJailJudges"},
	{Name: "the broker jail may share the host's network", File: "jail.go",
		Edits: []mutation.Edit{{Old: "\tcase b.NetNS == \"\" || b.NetNS == b.HostNetNS || !slices.Equal(b.Interfaces, []string{\"lo\"}):", New: "\tcase false:"}},
		Kills: "TestJailJudges"},
	{Name: "the guarded jail may share the host's network", File: "jail.go",
		Edits: []mutation.Edit{{Old: "\tcase r.j.wl.NetNS == \"\" || r.j.wl.NetNS == b.HostNetNS || !slices.Equal(r.j.wl.Interfaces, []string{\"lo\"}):", New: "\tcase false:"}},
		Kills: "TestJailJudges"},
	{Name: "the jail's host contacts are not looked at", File: "jail.go",
		Edits: []mutation.Edit{{Old: "\tcase len(r.host.from(\"\")) > 0:", New: "\tcase false:"}},
		Kills: "TestJailJudges"},
	{Name: "a jail's contact is filtered by an address it lacks", File: "cases.go",
		Edits: []mutation.Edit{{Old: "\tif r.j != nil {\n\t\treturn \"\"\n\t}", New: "\tif false {\n\t\treturn \"\"\n\t}"}},
		Kills: "TestJailJudges"},
	{Name: "the jail's tunnel keeps the first verdict", File: "jail.go",
		Edits: []mutation.Edit{{Old: "if why == \"\" || rank[cv] > rank[v] {", New: "if _ = rank; why == \"\" {"}},
		Kills: "TestJailJudges"},
	{Name: "jail plane traffic may come through the guard", File: "jail.go",
		Edits: []mutation.Edit{{Old: "if err != nil || !ap.Addr().IsLoopback() {", New: "if err != nil || !ap.IsValid() {"}},
		Kills: "TestJailJudges"},
	{Name: "the guard's log is not read for jail plane traffic", File: "jail.go",
		Edits: []mutation.Edit{{Old: "\tcase strings.Contains(r.guardLogs, planeHost):", New: "\tcase false:"}},
		Kills: "TestJailJudges"},
	{Name: "the jail's host loopback is not tried", File: "jail.go",
		Edits: []mutation.Edit{{Old: "\tout = append(out, netip.MustParseAddr(\"127.0.0.1\"))\n", New: "\n"}},
		Kills: "TestJailSpecs"},
	{Name: "an unestablished case holds its fact", File: "matrix.go",
		Edits: []mutation.Edit{{Old: "ok = ok && c.Verdict == Pass", New: "ok = ok && c.Verdict != Fail"}},
		Kills: "TestHeld"},
}

// TestGuardMutantsApply checks, without an engine, that every guard and
// provider mutant's edits still apply to the tree, each exactly once, so
// a stale mutant fails in an ordinary run, not in CI's mutation step.
func TestGuardMutantsApply(t *testing.T) {
	for _, m := range Mutants() {
		for _, fe := range append([]FileEdits{{File: m.File, Edits: m.Edits}}, m.More...) {
			b, err := os.ReadFile(filepath.Join("../..", fe.File))
			if err != nil {
				t.Errorf("mutant %q: %v", m.Name, err)
				continue
			}
			text := string(b)
			for i, e := range fe.Edits {
				if n := strings.Count(text, e.Old); n != 1 {
					t.Errorf("mutant %q, edit %d: %s holds its text %d times, want once", m.Name, i, fe.File, n)
					continue
				}
				text = strings.Replace(text, e.Old, e.New, 1)
			}
		}
	}
}
