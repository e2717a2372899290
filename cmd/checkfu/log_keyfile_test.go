package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLogKeyFilesModeAndOwner: the log commands read their key files as
// "process" does, refusing a master or signing key other users may read
// or write, a verifier key other users may write, and a key file owned
// by another user (not root), whatever its mode; each file is accepted
// once its mode and owner are fixed.
func TestLogKeyFilesModeAndOwner(t *testing.T) {
	dir := t.TempDir()
	store := "sqlite:" + filepath.Join(dir, "log.db")
	if _, stderr, code := runCLI(t, sampleLines, "log", "append", "-store", store, "-session", "s1"); code != exitOK {
		t.Fatalf("log append: exit %d, stderr %q", code, stderr)
	}
	master := filepath.Join(dir, "master.key")
	if err := os.WriteFile(master, []byte(strings.Repeat("ab", 32)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	signing, verifier := logKeys(t, dir)
	cpOut, stderr, code := runCLI(t, "", "log", "checkpoint", "-store", store, "-session", "s1", "-signing-key", signing)
	if code != exitOK {
		t.Fatalf("log checkpoint: exit %d, stderr %q", code, stderr)
	}
	cp := filepath.Join(dir, "checkpoint")
	if err := os.WriteFile(cp, []byte(cpOut), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name      string
		file      string
		bad, good os.FileMode
		refusal   string
		args      []string
	}{
		{"master key", master, 0o640, 0o600, "other users may read or write", []string{"log", "verify", "-store", store, "-session", "s1", "-key-file", master}},
		{"signing key", signing, 0o604, 0o600, "other users may read or write", []string{"log", "checkpoint", "-store", store, "-session", "s1", "-signing-key", signing}},
		{"verifier key", verifier, 0o620, 0o644, "other users may write", []string{"log", "verify", "-store", store, "-session", "s1", "-checkpoint", cp, "-verifier-key", verifier}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := os.Chmod(c.file, c.bad); err != nil {
				t.Fatal(err)
			}
			if _, stderr, code := runCLI(t, "", c.args...); code != exitFailed || !strings.Contains(stderr, c.refusal) || !strings.Contains(stderr, "config_invalid") {
				t.Errorf("mode %#o: exit %d, stderr %q; want 1, config_invalid, %q", c.bad, code, stderr, c.refusal)
			}
			if err := os.Chmod(c.file, c.good); err != nil {
				t.Fatal(err)
			}
			if _, stderr, code := runCLI(t, "", c.args...); code != exitOK {
				t.Fatalf("mode %#o: exit %d, stderr %q; want 0", c.good, code, stderr)
			}
			// Owned by another user: as root, give the file to nobody; as
			// anyone else, act as the next uid, so that our file is theirs.
			if os.Getuid() == 0 {
				if err := os.Chown(c.file, 65534, 65534); err != nil {
					t.Fatal(err)
				}
				defer os.Chown(c.file, 0, 0)
			} else {
				defer func(f func() int) { keyFileUser = f }(keyFileUser)
				keyFileUser = func() int { return os.Getuid() + 1 }
			}
			if _, stderr, code := runCLI(t, "", c.args...); code != exitFailed || !strings.Contains(stderr, "is owned by uid") {
				t.Errorf("owned by another user: exit %d, stderr %q; want 1, is owned by uid", code, stderr)
			}
		})
	}
}
