package main

import (
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLogAppendPrintsHashes: each acknowledgement names the event's
// chain hash, the head a writer can record elsewhere; the last one is
// the head verify reports.
func TestLogAppendPrintsHashes(t *testing.T) {
	store := "sqlite:" + filepath.Join(t.TempDir(), "log.db")
	out, stderr, code := runCLI(t, sampleLines, "log", "append", "-store", store, "-session", "s1")
	if code != 0 || ackedSeqs(out) != "1 2 3" {
		t.Fatalf("log append: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	last := strings.TrimPrefix(lines[2], "seq 3 hash ")
	vout, _, _ := runCLI(t, "", "log", "verify", "-store", store, "-session", "s1", "-head", "3:"+last)
	if !strings.HasSuffix(vout, "head "+last+"\n") {
		t.Errorf("verify says %q, want head %s", vout, last)
	}
}

// logKeys makes a checkpoint key pair in dir and returns the signing and
// verifier key files.
func logKeys(t *testing.T, dir string) (signing, verifier string) {
	t.Helper()
	signing, verifier = filepath.Join(dir, "log.key"), filepath.Join(dir, "log.vkey")
	out, stderr, code := runCLI(t, "", "log", "keygen", "-name", "log.test/eventlog", "-signing-key", signing)
	if code != 0 || !strings.HasPrefix(out, "log.test/eventlog+") {
		t.Fatalf("log keygen: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	if err := os.WriteFile(verifier, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(signing); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("signing key file: %v, %v; want mode 0600", fi, err)
	}
	if _, stderr, code := runCLI(t, "", "log", "keygen", "-name", "x", "-signing-key", signing); code != exitFailed || !strings.Contains(stderr, "exists") {
		t.Errorf("log keygen over an existing key: exit %d, stderr %q", code, stderr)
	}
	return signing, verifier
}

// TestLogCheckpointRefusesTruncatedAndRolledBack: a checkpoint printed
// by "log checkpoint" makes "log verify -checkpoint" refuse the log once
// its newest events are deleted, and once it is rolled back and written
// again.
func TestLogCheckpointRefusesTruncatedAndRolledBack(t *testing.T) {
	dir := t.TempDir()
	signing, verifier := logKeys(t, dir)
	path := filepath.Join(dir, "log.db")
	store := "sqlite:" + path
	if _, stderr, code := runCLI(t, sampleLines, "log", "append", "-store", store, "-session", "s1"); code != 0 {
		t.Fatal(stderr)
	}
	cp, stderr, code := runCLI(t, "", "log", "checkpoint", "-store", store, "-session", "s1", "-signing-key", signing)
	if code != 0 || !strings.HasPrefix(cp, "log.test/eventlog/s1\n3\n") || !strings.Contains(cp, "\n\n— log.test/eventlog ") {
		t.Fatalf("log checkpoint: exit %d, stdout %q, stderr %q", code, cp, stderr)
	}
	cpFile := filepath.Join(dir, "cp")
	if err := os.WriteFile(cpFile, []byte(cp), 0o644); err != nil {
		t.Fatal(err)
	}
	verify := func() (string, string, int) {
		return runCLI(t, "", "log", "verify", "-store", store, "-session", "s1", "-checkpoint", cpFile, "-verifier-key", verifier)
	}
	if out, stderr, code := verify(); code != 0 || !strings.HasPrefix(out, "ok: session s1 verified through seq 3") {
		t.Fatalf("log verify -checkpoint: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`DELETE FROM eventlog_events WHERE seq = 3`); err != nil {
		t.Fatal(err)
	}
	if out, _, _ := runCLI(t, "", "log", "verify", "-store", store, "-session", "s1"); !strings.HasPrefix(out, "ok:") {
		t.Fatalf("plain verify of the truncated log says %q; the test needs the chain alone to pass", out)
	}
	out, stderr, code := verify()
	if code != exitFailed || out != "first bad seq: 3\n" || !strings.Contains(stderr, "truncated") || !strings.Contains(stderr, "code: chain_broken") {
		t.Errorf("log verify -checkpoint of a truncated log: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	// Rolled back: another seq 3 and a seq 4 in its place.
	if _, stderr, code := runCLI(t, `{"kind":"skip"}`+"\n"+`{"kind":"skip"}`+"\n", "log", "append", "-store", store, "-session", "s1"); code != 0 {
		t.Fatal(stderr)
	}
	out, stderr, code = verify()
	if code != exitFailed || out != "first bad seq: 3\n" || !strings.Contains(stderr, "rewritten") {
		t.Errorf("log verify -checkpoint of a rolled-back log: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	// A checkpoint that does not open is refused, not ignored.
	if err := os.WriteFile(cpFile, []byte(strings.Replace(cp, "\n3\n", "\n4\n", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := verify(); code != exitFailed || !strings.Contains(stderr, "code: checkpoint_invalid") {
		t.Errorf("log verify with a forged checkpoint: exit %d, stderr %q", code, stderr)
	}
}

// TestLogAppendCheckpointAtEnd: "log append -checkpoint-out" signs a
// checkpoint when its input ends, which verify then accepts.
func TestLogAppendCheckpointAtEnd(t *testing.T) {
	dir := t.TempDir()
	signing, verifier := logKeys(t, dir)
	store := "sqlite:" + filepath.Join(dir, "log.db")
	cpFile := filepath.Join(dir, "cp")
	if _, stderr, code := runCLI(t, sampleLines, "log", "append", "-store", store, "-session", "s1", "-signing-key", signing, "-checkpoint-out", cpFile); code != 0 {
		t.Fatal(stderr)
	}
	if b, err := os.ReadFile(cpFile); err != nil || !strings.HasPrefix(string(b), "log.test/eventlog/s1\n3\n") {
		t.Fatalf("checkpoint file = %q, %v", b, err)
	}
	if out, stderr, code := runCLI(t, "", "log", "verify", "-store", store, "-session", "s1", "-checkpoint", cpFile, "-verifier-key", verifier); code != 0 {
		t.Errorf("verify against the append's checkpoint: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
}

func TestLogCheckpointUsage(t *testing.T) {
	for _, args := range [][]string{
		{"log", "checkpoint", "-store", "sqlite:x.db", "-session", "s"},
		{"log", "keygen", "-name", "x"},
		{"log", "verify", "-store", "sqlite:x.db", "-session", "s", "-checkpoint", "cp"},
		{"log", "append", "-store", "sqlite:x.db", "-session", "s", "-checkpoint-out", "cp"},
	} {
		if _, stderr, code := runCLI(t, "", args...); code != exitUsage {
			t.Errorf("checkfu %v: exit %d, want %d (stderr %q)", args, code, exitUsage, stderr)
		}
	}
}
