package main

// Red team of the operator-facing command (wt-rtcli): the files, flags,
// environment and stdin an operator or a hostile party feeds it. All of
// it is mock/isolated: throwaway keys and files in t.TempDir(), FIFOs the
// test makes, loopback only; no production key, store or provider.

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/conformance"
	"github.com/checkfu/checkfu/conformance/matrix"
	"github.com/checkfu/checkfu/internal/clitest"
)

// endlessFIFO makes a FIFO in dir whose writer sends n bytes of fill and
// then holds the FIFO open without closing it until the test ends: a
// reader that wants the end of the file waits for ever. The returned
// release ends the writer (the reader then sees EOF); it is also called
// at cleanup.
func endlessFIFO(t *testing.T, dir, name string, fill byte, n int) (path string, release func()) {
	t.Helper()
	path = filepath.Join(dir, name)
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		w, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		defer w.Close()
		buf := []byte(strings.Repeat(string(fill), n))
		// A reader that stops early closes its end: the write fails
		// (EPIPE) and the writer waits for release.
		w.Write(buf)
		<-done
	}()
	var once bool
	release = func() {
		if once {
			return
		}
		once = true
		close(done)
		// Open the read end once, non-blocking, so a writer still
		// blocked in its open returns.
		if r, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
			r.Close()
		}
		<-stopped
	}
	t.Cleanup(release)
	return path, release
}

// runWithin runs one command line in-process and fails the test when it
// has not returned within d; release is then called so the command ends.
func runWithin(t *testing.T, d time.Duration, release func(), args ...string) (stdout, stderr string, code int) {
	t.Helper()
	type result struct {
		stdout, stderr string
		code           int
	}
	ch := make(chan result, 1)
	go func() {
		var r result
		r.stdout, r.stderr, r.code = runCLI(t, "", args...)
		ch <- r
	}()
	select {
	case r := <-ch:
		return r.stdout, r.stderr, r.code
	case <-time.After(d):
		t.Errorf("checkfu %s: still reading after %v: the input is not bounded", strings.Join(args, " "), d)
		release()
		r := <-ch
		return r.stdout, r.stderr, r.code
	}
}

// TestGuardPolicyStreamIsBounded: -policy names a pipe that sends more
// than a policy may hold and never ends (or a device such as /dev/zero).
// The guard reads at most egress's bound plus one byte and refuses it;
// it does not wait for an end that never comes, nor hold it all.
func TestGuardPolicyStreamIsBounded(t *testing.T) {
	dir := t.TempDir()
	fifo, release := endlessFIFO(t, dir, "policy.json", ' ', guardMaxPolicyFile+1)
	_, stderr, code := runWithin(t, 5*time.Second, release, "guard", "-listen", "127.0.0.1:0", "-policy", fifo)
	if code != exitFailed || !strings.Contains(stderr, "larger than 65536 bytes") || !strings.Contains(stderr, "code: config_invalid") {
		t.Fatalf("guard -policy FIFO: exit %d, stderr %q; want 1, larger than 65536 bytes, config_invalid", code, stderr)
	}
}

// TestLogKeyFileStreamIsBounded: -key-file names a pipe of endless hex
// (or /dev/zero): every log subcommand that takes it reads at most
// maxKeyFile plus one byte and refuses it.
func TestLogKeyFileStreamIsBounded(t *testing.T) {
	dir := t.TempDir()
	store := "sqlite:" + filepath.Join(dir, "log.db")
	if _, stderr, code := runCLI(t, sampleLines, "log", "append", "-store", store, "-session", "s1"); code != exitOK {
		t.Fatalf("log append: exit %d, stderr %q", code, stderr)
	}
	for _, sub := range []string{"append", "read", "verify", "checkpoint"} {
		t.Run(sub, func(t *testing.T) {
			fifo, release := endlessFIFO(t, t.TempDir(), "master.key", 'a', maxKeyFile+1)
			args := []string{"log", sub, "-store", store, "-session", "s1", "-key-file", fifo}
			if sub == "checkpoint" {
				signing, _ := logKeys(t, t.TempDir())
				args = append(args, "-signing-key", signing)
			}
			_, stderr, code := runWithin(t, 5*time.Second, release, args...)
			if code != exitFailed || !strings.Contains(stderr, "larger than 65536 bytes") {
				t.Fatalf("log %s -key-file FIFO: exit %d, stderr %q; want 1, larger than 65536 bytes", sub, code, stderr)
			}
		})
	}
}

// TestProcessAttachExitStatusNeverWrapsToSuccess: the exit status comes
// from the provider (a hostile one may send any int32), and a shell keeps
// only the low 8 bits of what attach exits with. A status of 256 must
// not read as success, nor any status outside 0-255 as another status.
func TestProcessAttachExitStatusNeverWrapsToSuccess(t *testing.T) {
	for _, status := range []int{0, 1, 5, 255, 256, 512, -1, -256, 1<<31 - 1, -1 << 31} {
		var stderr strings.Builder
		e := &env{stdout: &strings.Builder{}, stderr: &stderr}
		code := report(e, attachExit(status))
		shell := code & 0xff // what os.Exit(code) leaves the parent
		switch {
		case status == 0 && code != exitOK:
			t.Errorf("status 0: attach exits %d, want 0", code)
		case status >= 1 && status <= 255 && code != status:
			t.Errorf("status %d: attach exits %d, want it passed through", status, code)
		case (status < 0 || status > 255) && (shell != exitFailed || code != exitFailed || !strings.Contains(stderr.String(), "outside 0-255")):
			t.Errorf("status %d: attach exits %d (the shell sees %d), stderr %q; want %d naming the status outside 0-255", status, code, shell, stderr.String(), exitFailed)
		}
	}
}

// TestEmptyFlagIsNotLeftOut: a check flag given an empty value (a
// script's -evidence "$UNSET") is a usage error, not the check skipped
// with exit 0.
func TestEmptyFlagIsNotLeftOut(t *testing.T) {
	dir := t.TempDir()
	store := "sqlite:" + filepath.Join(dir, "log.db")
	if _, stderr, code := runCLI(t, sampleLines, "log", "append", "-store", store, "-session", "s1"); code != exitOK {
		t.Fatalf("log append: exit %d, stderr %q", code, stderr)
	}
	signing, _ := logKeys(t, dir)
	receipt, set, target := certifyingReceipt(t, dir)
	if _, stderr, code := runCLI(t, "", "receipt", "verify", "-attesters", set, "-provider", target.Provider, "-revision", target.Revision, receipt); code != exitOK {
		t.Fatalf("the receipt does not certify without -evidence (exit %d, %q): the test proves nothing", code, stderr)
	}
	tests := [][]string{
		{"receipt", "verify", "-attesters", set, "-evidence", "", "-provider", target.Provider, "-revision", target.Revision, receipt},
		{"receipt", "verify", "-attesters", set, "-evidence=", "-provider", target.Provider, "-revision", target.Revision, receipt},
		{"log", "verify", "-store", store, "-session", "s1", "-checkpoint", "", "-verifier-key", ""},
		{"log", "verify", "-store", store, "-session", "s1", "-head", ""},
		{"log", "verify", "-store", store, "-session", "s1", "-key-file", ""},
		{"log", "checkpoint", "-store", store, "-session", "s1", "-signing-key", signing, "-key-file", ""},
	}
	for _, args := range tests {
		stdout, stderr, code := runCLI(t, "", args...)
		if code != exitUsage || !strings.Contains(stderr, "an empty value") {
			t.Errorf("checkfu %q: exit %d, stdout %q, stderr %q; want 2 naming the empty value", args, code, stdout, stderr)
		}
	}
}

// TestProfileSelectQuotesReceiptFileNames: the receipts directory may
// hold files named by whoever delivered them; a name that does not verify
// is printed quoted, never as terminal control.
func TestProfileSelectQuotesReceiptFileNames(t *testing.T) {
	dir := t.TempDir()
	in := writeFile(t, dir, "p.json", `{"name": "go-build", `+cliImage+`, "network_policy": {"type": "allowlist", "allowed_hosts": ["api.example.com"]}}`)
	pub := filepath.Join(dir, "p.pub.json")
	if _, stderr, code := runCLI(t, "", "profile", "publish", "-in", in, "-out", pub); code != exitOK {
		t.Fatalf("publish: exit %d, %q", code, stderr)
	}
	providers := writeFile(t, dir, "providers.json", `{"providers": [{"provider": "partner:vm", "provider_revision": "7", "egress_certification": "advisory_filter", "enforcement": {"network_policy": "provider_attested"}}]}`)
	receipts := t.TempDir()
	hostile := "\x1b]0;owned\x07\x1b[2J\r\u202e.json"
	writeFile(t, receipts, hostile, "not a receipt")
	_, stderr, code := runCLI(t, "", "profile", "select", "-profile", pub, "-providers", providers, "-receipts", receipts)
	if code != exitOK || !strings.Contains(stderr, "ignored: envelope_malformed") {
		t.Fatalf("select: exit %d, stderr %q", code, stderr)
	}
	if strings.ContainsAny(stderr, "\x1b\x07\r\u202e") {
		t.Fatalf("select printed a receipt's file name raw: %q", stderr)
	}
}

// certifyingReceipt signs, with a throwaway key, a receipt that certifies
// a made-up pair (mock: see certifiedReport) and returns it, the attester
// set and the pair.
func certifyingReceipt(t *testing.T, dir string) (receipt, set string, target checkfu.ProviderRevision) {
	t.Helper()
	rep, receipt, set := certifiedReport(t, dir, "rt")
	return receipt, set, rep.Target
}

// certifiedReport makes up a matrix report of every fact held for
// checkfu:daytona-provider@2 and signs, with a throwaway key named name,
// a receipt of its record; it returns the report, the receipt and the
// attester set that holds the key. The evidence is mock: the production
// label is written by hand, to reach the checks past the label's.
func certifiedReport(t *testing.T, dir, name string) (rep *matrix.Report, receipt, set string) {
	t.Helper()
	key, pub := keygen(t, dir, name+"-attester")
	set = writeSet(t, dir, pub)
	target := checkfu.ProviderRevision{Provider: "checkfu:daytona-provider", Revision: "2"}
	rep = &matrix.Report{Target: target, Provider: target.Provider, Revision: target.Revision, Label: checkfu.LabelProduction.String(),
		Topology: json.RawMessage(`{"guard":"mock"}`)}
	rep.TopoSum = conformance.DigestOf(rep.Topology)
	for _, f := range conformance.Facts() {
		ev := json.RawMessage(`{"case":"` + string(f) + `"}`)
		rep.Cases = append(rep.Cases, matrix.Case{Fact: f, Name: string(f), Verdict: matrix.Pass, Evidence: ev, Digest: conformance.DigestOf(ev)})
	}
	rec, err := rep.Record(time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	rec.Label = checkfu.LabelProduction
	stmt, err := rec.Statement()
	if err != nil {
		t.Fatal(err)
	}
	return rep, sign(t, dir, key, string(stmt), name), set
}

// TestStoreDSNNeverEchoesItsPassword: a -store value may hold a database
// password; no log subcommand prints any of it, whatever the scheme (a
// mistyped one included) and however it fails (refused, unparsable,
// unreachable on loopback).
func TestStoreDSNNeverEchoesItsPassword(t *testing.T) {
	const pw = "Pw7Zq" // short: a cut at a fixed length is no protection
	dsns := []string{
		"pg://:" + pw + "@h/db",
		"p://u:" + pw + "@h",
		"mysql://u:" + pw + "@h/db",
		"u:" + pw + "@h/db",
		"postgres://u:" + pw + "@127.0.0.1:1/db",
		"postgres://u:" + pw + "@[::1/db",
		"postgresql://u:" + pw + "@127.0.0.1:1/db?sslmode=bogus",
		"postgres:// host=127.0.0.1 port=1 password=" + pw,
	}
	for _, dsn := range dsns {
		for _, sub := range []string{"list", "read", "verify"} {
			args := []string{"log", sub, "-store", dsn}
			if sub != "list" {
				args = append(args, "-session", "s1")
			}
			stdout, stderr, code := runCLI(t, "", args...)
			if code == exitOK || strings.Contains(stdout+stderr, pw) || strings.Contains(stdout+stderr, pw[:3]) {
				t.Errorf("checkfu log %s -store %q: exit %d, output %q; want a failure that names no part of the password", sub, dsn, code, stdout+stderr)
			}
		}
	}
}

// TestProviderNamesCannotDriveTheTerminal: the providers document of
// "profile select" and the statement "receipt sign" signs (which may come
// from the provider being attested) name providers; a name holding
// terminal control (ESC, BEL, CR) or a bidirectional override is printed
// quoted, not raw.
func TestProviderNamesCannotDriveTheTerminal(t *testing.T) {
	dir := t.TempDir()
	in := writeFile(t, dir, "p.json", `{"name": "go-build", `+cliImage+`, "network_policy": {"type": "allowlist", "allowed_hosts": ["api.example.com"]}}`)
	pub := filepath.Join(dir, "p.pub.json")
	if _, stderr, code := runCLI(t, "", "profile", "publish", "-in", in, "-out", pub); code != exitOK {
		t.Fatalf("publish: exit %d, %q", code, stderr)
	}
	providers := writeFile(t, dir, "providers.json", `{"providers": [
		{"provider": "partner:\u001b[2Jvm", "provider_revision": "7\r", "egress_certification": "unsupported"},
		{"provider": "p\u001b]0;owned\u0007", "provider_revision": "\u202e7", "egress_certification": "advisory_filter", "enforcement": {"network_policy": "provider_attested"}}]}`)
	for _, asJSON := range []bool{false, true} {
		args := []string{"profile", "select", "-profile", pub, "-providers", providers}
		if asJSON {
			args = append(args, "-json")
		}
		stdout, stderr, code := runCLI(t, "", args...)
		if code != exitOK || !strings.Contains(stdout, "owned") {
			t.Fatalf("select (json %v): exit %d, stdout %q, stderr %q", asJSON, code, stdout, stderr)
		}
		raw := "\x1b\x07\r\u202e"
		if asJSON {
			raw = "\x1b\x07\r" // JSON escapes control characters; U+202E is data in a JSON string
		}
		if strings.ContainsAny(stdout+stderr, raw) {
			t.Errorf("select (json %v) printed a provider name raw: %q", asJSON, stdout+stderr)
		}
	}

	key, _ := keygen(t, dir, "attester")
	stmt := strings.Replace(cliStatement, `"checkfu:daytona-provider"`, `"checkfu:\u202erevo-enotyad"`, 1)
	stmtPath := writeFile(t, dir, "stmt.json", stmt)
	stdout, stderr, code := runCLI(t, "", "receipt", "sign", "-key", key, "-statement", stmtPath, "-out", filepath.Join(dir, "r.json"))
	if code != exitOK || !strings.Contains(stdout, "revo-enotyad") {
		t.Fatalf("receipt sign: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if strings.ContainsAny(stdout+stderr, "\u202e") {
		t.Errorf("receipt sign printed the statement's provider raw: %q", stdout+stderr)
	}
}

// TestMatrixWhyCannotDriveTheTerminal: a case's why quotes what the
// provider under test answered (the guard's refusal code, its error
// text, the listener it reached), so a hostile provider chooses part of
// it. The progress line and the held table print it without terminal
// control. (No engine: the report is made up.)
func TestMatrixWhyCannotDriveTheTerminal(t *testing.T) {
	why := "answered 403 \x1b]0;owned\x07\x1b[2J\r\u202eok, not a refusal"
	for _, why := range []string{why, "answered 403 \u202eok, not a refusal"} { // the second: a format character alone
		c := matrix.Case{Fact: conformance.Facts()[0], Name: "hostile", Verdict: matrix.Fail, Why: why}
		rep := &matrix.Report{Cases: []matrix.Case{c}}
		for _, line := range append([]string{progressLine(c)}, heldTable(rep)...) {
			if !strings.Contains(line, "answered 403") || strings.ContainsAny(line, "\x1b\x07\r\u202e") {
				t.Errorf("matrix prints %q", line)
			}
		}
	}
	plain := matrix.Case{Fact: conformance.Facts()[0], Name: "plain", Verdict: matrix.Pass, Why: "status 403 host_not_allowed; the private listener recorded nothing"}
	if got := progressLine(plain); !strings.HasSuffix(got, " "+plain.Why) {
		t.Errorf("a printable why is changed: %q", got)
	}
}

// TestGuardCPUProfileFollowsNoLink: -cpuprofile names a path in a shared
// directory (/tmp) where a local stranger may plant a link to a file of
// the operator's. The guard refuses a link there instead of truncating
// and overwriting what it points at. (A regular file is still replaced,
// as before.) The real binary: a guard that starts serves until killed.
func TestGuardCPUProfileFollowsNoLink(t *testing.T) {
	victim := writeFile(t, t.TempDir(), "victim", "untouched")
	link := filepath.Join(t.TempDir(), "guard.prof")
	if err := os.Symlink(victim, link); err != nil {
		t.Fatal(err)
	}
	policy := writeFile(t, t.TempDir(), "policy.json", `{"type":"none"}`)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, clitest.Binary(t), "guard", "-listen", "127.0.0.1:0", "-policy", policy, "-cpuprofile", link)
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil || exitCode(err) != exitFailed || !strings.Contains(string(out), "-cpuprofile") {
		t.Errorf("guard -cpuprofile LINK: exit %d (%v, deadline %v), output %q; want 1 before serving", exitCode(err), err, ctx.Err(), out)
	}
	if b, _ := os.ReadFile(victim); string(b) != "untouched" {
		t.Errorf("the profile went through the link: the victim holds %d bytes", len(b))
	}

	// A pipe planted there: refused at once, not waited on; a device
	// is not a regular file either.
	fifo := filepath.Join(t.TempDir(), "guard.prof")
	if err := syscall.Mkfifo(fifo, 0o666); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{fifo, "/dev/null"} {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		out, err := exec.CommandContext(ctx, clitest.Binary(t), "guard", "-listen", "127.0.0.1:0", "-policy", policy, "-cpuprofile", path).CombinedOutput()
		if ctx.Err() != nil || exitCode(err) != exitFailed {
			t.Errorf("guard -cpuprofile %s: exit %d (%v, deadline %v), output %q; want 1 before serving", path, exitCode(err), err, ctx.Err(), out)
		}
		cancel()
	}

	// A regular file (here an existing one) is still written, mode 0600.
	prof := writeFile(t, t.TempDir(), "guard.prof", "old")
	g := startGuardCommand(t, "-policy", policy, "-cpuprofile", prof)
	g.cmd.Process.Signal(os.Interrupt)
	if err := g.cmd.Wait(); err != nil {
		t.Fatalf("guard -cpuprofile FILE: %v, stderr %q", err, g.stderr.String())
	}
	if fi, err := os.Stat(prof); err != nil || fi.Size() == 0 || string(must(os.ReadFile(prof))) == "old" {
		t.Errorf("guard -cpuprofile FILE: the profile was not written (%v, %v)", fi, err)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
