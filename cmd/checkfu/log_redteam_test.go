package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/checkfu/checkfu/eventlog"
	"github.com/checkfu/checkfu/eventlog/sqlitelog"
)

// TestLogAppendCheckpointOutFollowsNoLink: "log append -checkpoint-out F"
// does not write through a file or link another user left at a
// predictable temporary name beside F.
func TestLogAppendCheckpointOutFollowsNoLink(t *testing.T) {
	dir := t.TempDir()
	signing, _ := logKeys(t, dir)
	victim := filepath.Join(dir, "victim")
	if err := os.WriteFile(victim, []byte("precious\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "cp")
	if err := os.Symlink(victim, out+".tmp"); err != nil {
		t.Fatal(err)
	}
	store := "sqlite:" + filepath.Join(dir, "log.db")
	if _, stderr, code := runCLI(t, sampleLines, "log", "append", "-store", store, "-session", "s1", "-signing-key", signing, "-checkpoint-out", out); code != 0 {
		t.Fatalf("log append: exit %d, stderr %q", code, stderr)
	}
	if b, _ := os.ReadFile(victim); string(b) != "precious\n" {
		t.Errorf("the file a link at %s.tmp names now holds %q", out, b)
	}
	if b, err := os.ReadFile(out); err != nil || !strings.HasPrefix(string(b), "log.test/eventlog/s1\n3\n") {
		t.Errorf("checkpoint file: %q, %v", b, err)
	}
}

// TestLogVerifyReadsKeyFromPipe: a verifier key or checkpoint passed as
// a pipe (-checkpoint <(...)) that arrives in pieces is read whole.
func TestLogVerifyReadsKeyFromPipe(t *testing.T) {
	dir := t.TempDir()
	signing, verifier := logKeys(t, dir)
	store := "sqlite:" + filepath.Join(dir, "log.db")
	if _, stderr, code := runCLI(t, sampleLines, "log", "append", "-store", store, "-session", "s1"); code != 0 {
		t.Fatalf("log append: exit %d, stderr %q", code, stderr)
	}
	cp, stderr, code := runCLI(t, "", "log", "checkpoint", "-store", store, "-session", "s1", "-signing-key", signing)
	if code != 0 {
		t.Fatalf("log checkpoint: exit %d, stderr %q", code, stderr)
	}
	vkey, _ := os.ReadFile(verifier)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	go func() {
		defer w.Close()
		w.Write(vkey[:10])
		time.Sleep(100 * time.Millisecond)
		w.Write(vkey[10:])
	}()
	cpFile := filepath.Join(dir, "cp")
	os.WriteFile(cpFile, []byte(cp), 0o644)
	pipe := "/proc/self/fd/" + itoa(int(r.Fd()))
	if out, stderr, code := runCLI(t, "", "log", "verify", "-store", store, "-session", "s1", "-checkpoint", cpFile, "-verifier-key", pipe); code != 0 {
		t.Errorf("log verify with the verifier key from a pipe: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestLogVerifyKeyFileRefusesForeignShred: a shred event appended by
// someone who can write the store but holds another key (here a log with
// a different master key) passes "log verify" without -key-file, which
// cannot tell, and fails it with the workspace's key; "log checkpoint
// -key-file" refuses to sign over it.
func TestLogVerifyKeyFileRefusesForeignShred(t *testing.T) {
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "key")
	if err := os.WriteFile(keyFile, []byte(strings.Repeat("ab", 32)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "log.db")
	store := "sqlite:" + path
	lines := strings.Repeat(`{"kind":"tool_call","content":"x"}`+"\n", 3)
	if out, stderr, code := runCLI(t, lines, "log", "append", "-store", store, "-session", "s", "-key-file", keyFile); code != 0 {
		t.Fatalf("log append: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	ctx := context.Background()
	s, err := sqlitelog.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	other, _ := eventlog.NewKeys(bytes.Repeat([]byte{0xcd}, 32))
	l, _ := eventlog.New(s, eventlog.Options{Keys: other})
	if err := l.Shred(ctx, "s", 2); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if out, stderr, code := runCLI(t, "", "log", "verify", "-store", store, "-session", "s"); code != 0 {
		t.Errorf("log verify without a key: exit %d, stdout %q, stderr %q; the keyless check cannot tell", code, out, stderr)
	}
	out, stderr, code := runCLI(t, "", "log", "verify", "-store", store, "-session", "s", "-key-file", keyFile)
	if code != exitFailed || !strings.Contains(out, "first bad seq: 2") {
		t.Errorf("log verify -key-file over a foreign shred: exit %d, stdout %q, stderr %q; want first bad seq 2", code, out, stderr)
	}
	signing, _ := logKeys(t, dir)
	if _, stderr, code := runCLI(t, "", "log", "checkpoint", "-store", store, "-session", "s", "-signing-key", signing, "-key-file", keyFile); code == 0 {
		t.Errorf("log checkpoint -key-file over a foreign shred succeeded; stderr %q", stderr)
	}
}
