package main

// Attacks of the wt-rtcli pass that held: each test shows the CLI as it
// is refusing them. All of it is mock/isolated (t.TempDir(), throwaway
// keys, loopback).

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestDevicesAsInputFilesAreRefused: /dev/zero (a file that never ends)
// given to every flag and argument that names a file the CLI reads. Each
// command refuses it at once, without reading it whole or panicking.
func TestDevicesAsInputFilesAreRefused(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	const z = "/dev/zero"
	var cases [][]string
	for _, c := range inputFileCases(t, t.TempDir()) {
		cases = append(cases, c(z))
	}
	for _, args := range cases {
		_, stderr, code := runWithin(t, 5*time.Second, func() {}, args...)
		if code != exitFailed || !strings.HasPrefix(stderr, "error: ") {
			t.Errorf("checkfu %q: exit %d, stderr %q; want 1 with an error line", args, code, stderr)
		}
	}
}

// TestLogAppendEndlessStdin: stdin that never ends and holds no newline
// (/dev/zero on stdin) is refused at the line bound (maxLine), not held.
func TestLogAppendEndlessStdin(t *testing.T) {
	store := "sqlite:" + filepath.Join(t.TempDir(), "log.db")
	var stdout, stderr bytes.Buffer
	e := &env{stdin: zeroReader{}, stdout: &stdout, stderr: &stderr, getenv: func(string) string { return "" }}
	code := run(e, []string{"log", "append", "-store", store, "-session", "s1"})
	if code != exitFailed || !strings.Contains(stderr.String(), "line longer than 4194304 bytes") || !strings.Contains(stderr.String(), "code: event_invalid") {
		t.Fatalf("log append < /dev/zero: exit %d, stderr %q", code, stderr.String())
	}
}

type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// TestKeyBytesNeverPrinted: a key file that is not a key, or not only a
// key, holding a canary (raw, as a PEM body, hex or base64): no form of
// the canary appears in any output of receipt sign, process, or the log
// commands.
func TestKeyBytesNeverPrinted(t *testing.T) {
	dir := t.TempDir()
	secret := make([]byte, 32)
	rand.Read(secret)
	forms := []string{hex.EncodeToString(secret), base64.StdEncoding.EncodeToString(secret), base64.RawURLEncoding.EncodeToString(secret), string(secret)}
	canary := "CANARY" + forms[0]
	validKey, pub := keygen(t, dir, "valid")
	valid, err := os.ReadFile(validKey)
	if err != nil {
		t.Fatal(err)
	}
	pubPath := writeFile(t, dir, "peer.pub", pub)
	bodies := map[string]string{
		"raw text":             canary + "\n",
		"private key PEM":      string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: secret})),
		"EC private key PEM":   string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: secret})),
		"public key PEM":       string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: secret})),
		"key then canary":      string(valid) + canary + "\n",
		"canary then key":      canary + "\n" + string(valid),
		"two keys":             string(valid) + string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: secret})),
		"hex one digit short":  forms[0][:63] + "\n",
		"hex with a bad digit": "z" + forms[0][1:] + "\n",
		"note key":             "PRIVATE+KEY+log.test/eventlog+00000000+" + forms[1] + "\n",
	}
	store := "sqlite:" + filepath.Join(dir, "log.db")
	if _, stderr, code := runCLI(t, sampleLines, "log", "append", "-store", store, "-session", "s1"); code != exitOK {
		t.Fatalf("log append: exit %d, %q", code, stderr)
	}
	stmt := writeFile(t, dir, "stmt.json", cliStatement)
	i := 0
	for name, body := range bodies {
		i++
		kf := filepath.Join(dir, "key"+itoa(i))
		if err := os.WriteFile(kf, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{
			{"receipt", "sign", "-key", kf, "-statement", stmt, "-out", filepath.Join(t.TempDir(), "r.json")},
			{"process", "serve", "-listen", "127.0.0.1:0", "-key", kf, "-peer", pubPath, "--", "true"},
			{"process", "attach", "-connect", "127.0.0.1:1", "-key", validKey, "-peer", kf},
			{"log", "verify", "-store", store, "-session", "s1", "-key-file", kf},
			{"log", "checkpoint", "-store", store, "-session", "s1", "-signing-key", kf},
			{"log", "append", "-store", store, "-session", "s1", "-key-file", kf},
		} {
			stdout, stderr, code := runCLI(t, "", args...)
			text := stdout + stderr
			if code == exitOK {
				t.Errorf("%s: checkfu %q exits 0", name, args)
			}
			for _, f := range append(forms, "CANARY", forms[0][:16], forms[1][:16]) {
				if strings.Contains(text, f) {
					t.Errorf("%s: checkfu %q printed the key (%q): %q", name, args, f[:min(len(f), 8)], text)
				}
			}
		}
	}
}

// TestWritesFollowNoLink: every file the CLI creates (attester and log
// signing keys, receipts, published profiles) is created with O_EXCL: a
// link planted at the path, live or dangling, is refused and the file it
// points at is neither created nor changed. A checkpoint written over a
// link replaces the link, not what it points at.
func TestWritesFollowNoLink(t *testing.T) {
	dir := t.TempDir()
	victimDir := t.TempDir()
	victim := writeFile(t, victimDir, "victim", "untouched")
	missing := filepath.Join(victimDir, "created")
	key, _ := keygen(t, dir, "attester")
	stmt := writeFile(t, dir, "stmt.json", cliStatement)
	profile := writeFile(t, dir, "p.json", `{"name": "go-build", `+cliImage+`, "network_policy": {"type": "allowlist", "allowed_hosts": ["api.example.com"]}}`)
	for _, target := range []string{victim, missing} {
		n := 0
		link := func() string {
			n++
			l := filepath.Join(dir, "link"+itoa(n)+filepath.Base(target))
			if err := os.Symlink(target, l); err != nil {
				t.Fatal(err)
			}
			return l
		}
		for _, args := range [][]string{
			{"attester", "keygen", "-out", link()},
			{"log", "keygen", "-name", "log.test/eventlog", "-signing-key", link()},
			{"receipt", "sign", "-key", key, "-statement", stmt, "-out", link()},
			{"profile", "publish", "-in", profile, "-out", link()},
		} {
			stdout, stderr, code := runCLI(t, "", args...)
			if code == exitOK || strings.Contains(stdout, "PRIVATE") {
				t.Errorf("checkfu %q through a link to %s: exit %d, stdout %q, stderr %q", args, filepath.Base(target), code, stdout, stderr)
			}
		}
	}
	if b, err := os.ReadFile(victim); err != nil || string(b) != "untouched" {
		t.Errorf("the link's target was written: %q, %v", b, err)
	}
	if _, err := os.Lstat(missing); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a dangling link's target was created: %v", err)
	}

	// -checkpoint-out over a link: the rename replaces the link.
	signing, _ := logKeys(t, dir)
	cpLink := filepath.Join(dir, "cp")
	if err := os.Symlink(victim, cpLink); err != nil {
		t.Fatal(err)
	}
	store := "sqlite:" + filepath.Join(dir, "log.db")
	if _, stderr, code := runCLI(t, sampleLines, "log", "append", "-store", store, "-session", "s1", "-signing-key", signing, "-checkpoint-out", cpLink); code != exitOK {
		t.Fatalf("log append -checkpoint-out: exit %d, %q", code, stderr)
	}
	if b, _ := os.ReadFile(victim); string(b) != "untouched" {
		t.Errorf("the checkpoint went through the link: %q", b)
	}
	if fi, err := os.Lstat(cpLink); err != nil || fi.Mode()&os.ModeSymlink != 0 || fi.Mode().Perm() != 0o644 {
		t.Errorf("-checkpoint-out is %v (%v); want a regular file, mode 0644", fi.Mode(), err)
	}
}

// TestOddCommandLinesNeverPanic: every command and subcommand given
// empty, lone-dash, NUL, huge and missing-value arguments exits 0, 1 or 2
// and never panics (run would take the test binary down with it). What
// it prints about a bad flag is the flag package's text, which echoes
// the argument whole and raw: left open (docs/changes/wt-rtcli.md).
func TestOddCommandLinesNeverPanic(t *testing.T) {
	words := [][]string{
		{"attester", "keygen"}, {"attester", "check"}, {"guard"}, {"log", "append"}, {"log", "list"}, {"log", "read"},
		{"log", "verify"}, {"log", "checkpoint"}, {"log", "keygen"}, {"process", "serve"}, {"process", "attach"},
		{"profile", "publish"}, {"profile", "diff"}, {"profile", "select"}, {"receipt", "sign"}, {"receipt", "verify"},
		{"version"}, {"matrix"}, {"log"}, {"process"}, {"receipt"}, {"profile"}, {"attester"},
	}
	huge := strings.Repeat("A", 1<<20)
	odd := [][]string{
		{""}, {"-"}, {"--"}, {"\x00"}, {huge}, {"-" + huge}, {"-" + huge + "=1"},
		{"-out"}, {"-store"}, {"-store", ""}, {"-store", "sqlite:"}, {"-session", ""}, {"-listen", ""},
		{"-output-window", ""}, {"-output-window", "KiB"}, {"-output-window", "99999999999999999999G"},
		{"-from", "-1"}, {"-from", "18446744073709551616"}, {"-head", ":"}, {"-head", "0:"}, {"-head", "1:" + huge},
		{"-max-connections", "-1"}, {"-slot", "-1"}, {"-format", "\x1b[2J"}, {"-log-format", "\x00"},
	}
	for _, w := range words {
		for _, o := range odd {
			args := append(append([]string{}, w...), o...)
			if w[0] == "matrix" && len(o) == 2 && o[0] == "-slot" {
				continue // needs an engine past the flags
			}
			if w[0] == "guard" && len(o) > 0 && o[0] == "-listen" {
				continue // listens
			}
			_, stderr, code := runWithin(t, 5*time.Second, func() {}, args...)
			if code < 0 || code > 2 {
				t.Errorf("checkfu %.60q: exit %d, stderr %.200q", args, code, stderr)
			}
		}
	}
}

var _ io.Reader = zeroReader{}

// inputFileCases builds, in dir, what each command that reads a file
// input needs besides it, and returns one command line per file input
// (23: every flag or argument the CLI reads a file from), the input
// given as in.
func inputFileCases(t *testing.T, dir string) []func(in string) []string {
	t.Helper()
	store := "sqlite:" + filepath.Join(dir, "log.db")
	if _, stderr, code := runCLI(t, sampleLines, "log", "append", "-store", store, "-session", "s1"); code != exitOK {
		t.Fatalf("log append: exit %d, %q", code, stderr)
	}
	_, verifier := logKeys(t, dir)
	receipt, set, target := certifyingReceipt(t, dir)
	key, pub := keygen(t, dir, "wire")
	pubPath := writeFile(t, dir, "wire.pub", pub)
	stmt := writeFile(t, dir, "stmt.json", cliStatement)
	profile := writeFile(t, dir, "p.json", `{"name": "go-build", `+cliImage+`, "network_policy": {"type": "allowlist", "allowed_hosts": ["api.example.com"]}}`)
	published := filepath.Join(dir, "p.pub.json")
	if _, stderr, code := runCLI(t, "", "profile", "publish", "-in", profile, "-out", published); code != exitOK {
		t.Fatalf("publish: exit %d, %q", code, stderr)
	}
	providers := writeFile(t, dir, "providers.json", `{"providers": [{"provider": "partner:vm", "provider_revision": "7", "egress_certification": "unsupported"}]}`)
	out := func(name string) string { return filepath.Join(t.TempDir(), name) }
	pr, rv := target.Provider, target.Revision
	return []func(string) []string{
		func(z string) []string { return []string{"guard", "-listen", "127.0.0.1:0", "-policy", z} },
		func(z string) []string {
			return []string{"log", "verify", "-store", store, "-session", "s1", "-key-file", z}
		},
		func(z string) []string {
			return []string{"log", "verify", "-store", store, "-session", "s1", "-checkpoint", z, "-verifier-key", verifier}
		},
		func(z string) []string {
			return []string{"log", "verify", "-store", store, "-session", "s1", "-checkpoint", verifier, "-verifier-key", z}
		},
		func(z string) []string {
			return []string{"log", "checkpoint", "-store", store, "-session", "s1", "-signing-key", z}
		},
		func(z string) []string {
			return []string{"log", "append", "-store", store, "-session", "s1", "-signing-key", z, "-checkpoint-out", out("cp")}
		},
		func(z string) []string {
			return []string{"log", "read", "-store", store, "-session", "s1", "-key-file", z}
		},
		func(z string) []string { return []string{"receipt", "verify", "-provider", pr, "-revision", rv, z} },
		func(z string) []string {
			return []string{"receipt", "verify", "-attesters", z, "-provider", pr, "-revision", rv, receipt}
		},
		func(z string) []string {
			return []string{"receipt", "verify", "-attesters", set, "-evidence", z, "-provider", pr, "-revision", rv, receipt}
		},
		func(z string) []string {
			return []string{"receipt", "sign", "-key", z, "-statement", stmt, "-out", out("r.json")}
		},
		func(z string) []string {
			return []string{"receipt", "sign", "-key", key, "-statement", z, "-out", out("r.json")}
		},
		func(z string) []string { return []string{"attester", "check", z} },
		func(z string) []string { return []string{"profile", "publish", "-in", z, "-out", out("p.json")} },
		func(z string) []string {
			return []string{"profile", "publish", "-in", profile, "-catalog", z, "-out", out("p.json")}
		},
		func(z string) []string {
			return []string{"profile", "publish", "-in", profile, "-prev", z, "-out", out("p.json")}
		},
		func(z string) []string { return []string{"profile", "diff", z, published} },
		func(z string) []string { return []string{"profile", "diff", "-catalog", z, published, published} },
		func(z string) []string { return []string{"profile", "select", "-profile", z, "-providers", providers} },
		func(z string) []string { return []string{"profile", "select", "-profile", published, "-providers", z} },
		func(z string) []string {
			return []string{"profile", "select", "-profile", published, "-providers", providers, "-attesters", z}
		},
		func(z string) []string {
			return []string{"process", "serve", "-listen", "127.0.0.1:0", "-key", z, "-peer", pubPath, "--", "true"}
		},
		func(z string) []string {
			return []string{"process", "attach", "-connect", "127.0.0.1:1", "-key", key, "-peer", z}
		},
	}
}
