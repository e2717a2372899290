package main

// File inputs bounded in time (wt-left3): a FIFO or pipe named as a file
// input that never sends its end is refused within inputWait. All of it
// is mock/isolated: FIFOs and files the test makes in t.TempDir().

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// shortenInputWait sets inputWait to d for the test. Tests that call it
// must not run in parallel (inputWait is the package's).
func shortenInputWait(t *testing.T, d time.Duration) {
	t.Helper()
	if inputWait != maxInputWait {
		t.Fatalf("inputWait is %v, want maxInputWait (%v) outside tests that shorten it", inputWait, maxInputWait)
	}
	inputWait = d
	t.Cleanup(func() { inputWait = maxInputWait })
}

// writerlessFIFO makes a FIFO in dir that no one opens for writing. Its
// release opens and closes each end once, non-blocking, so that a reader
// (or a writer the test starts) blocked in open(2) returns.
func writerlessFIFO(t *testing.T, dir, name string) (path string, release func()) {
	t.Helper()
	path = filepath.Join(dir, name)
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	release = func() {
		if w, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
		if r, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
			r.Close()
		}
	}
	t.Cleanup(release)
	return path, release
}

// TestFileInputsAreBoundedInTime: every file input (the 23 command lines
// of inputFileCases, and a receipt in profile select -receipts) given a FIFO that no writer ever opens, one whose
// writer opens it and never sends a byte, and one whose writer sends one
// byte and stalls. Each command is refused, config_invalid, naming the
// wait, no sooner than inputWait and well before the test gives up.
// Before the bound, the first held the command in open(2) and the other
// two in read(2), for ever.
func TestFileInputsAreBoundedInTime(t *testing.T) {
	const wait = 100 * time.Millisecond
	cases := inputFileCases(t, t.TempDir())
	shortenInputWait(t, wait)
	fifos := []struct {
		name string
		make func(dir string) (string, func())
	}{
		{"no writer", func(dir string) (string, func()) { return writerlessFIFO(t, dir, "in.json") }},
		{"silent writer", func(dir string) (string, func()) { return endlessFIFO(t, dir, "in.json", '{', 0) }},
		{"one byte then stall", func(dir string) (string, func()) { return endlessFIFO(t, dir, "in.json", '{', 1) }},
	}
	// A receipt in profile select -receipts DIR is read as the files are.
	dir := t.TempDir()
	_, set, _ := certifyingReceipt(t, dir)
	profile := writeFile(t, dir, "p.json", `{"name": "go-build", `+cliImage+`, "network_policy": {"type": "allowlist", "allowed_hosts": ["api.example.com"]}}`)
	published := filepath.Join(dir, "p.pub.json")
	if _, stderr, code := runCLI(t, "", "profile", "publish", "-in", profile, "-out", published); code != exitOK {
		t.Fatalf("publish: exit %d, %q", code, stderr)
	}
	providers := writeFile(t, dir, "providers.json", `{"providers": [{"provider": "partner:vm", "provider_revision": "7", "egress_certification": "unsupported"}]}`)
	cases = append(cases, func(in string) []string {
		return []string{"profile", "select", "-profile", published, "-providers", providers, "-attesters", set, "-receipts", filepath.Dir(in)}
	})
	for _, fifo := range fifos {
		for _, c := range cases {
			path, release := fifo.make(t.TempDir())
			args := c(path)
			start := time.Now()
			_, stderr, code := runWithin(t, 3*time.Second, release, args...)
			took := time.Since(start)
			release()
			if code != exitFailed || !strings.Contains(stderr, "sent no end within 100ms") || !strings.Contains(stderr, "code: config_invalid") {
				t.Errorf("%s: checkfu %q: exit %d, stderr %q; want 1, sent no end within 100ms, config_invalid", fifo.name, args, code, stderr)
			}
			if took < wait {
				t.Errorf("%s: checkfu %q: refused after %v, before inputWait (%v)", fifo.name, args, took, wait)
			}
			if t.Failed() {
				return // one case shows it; a mutant need not wait for all 72
			}
		}
	}
}

// TestFileInputWaitEdge: inputWait bounds the whole read, and only it. A
// writer that opens a named FIFO late and sends a verifier key in two
// pieces, all within the wait, is waited for and read whole (opening the
// FIFO without blocking does not read it as empty); a writer that sends
// part of the key and stalls past the wait is refused at the wait, not
// before it and not long after.
func TestFileInputWaitEdge(t *testing.T) {
	dir := t.TempDir()
	signing, verifier := logKeys(t, dir)
	store := "sqlite:" + filepath.Join(dir, "log.db")
	if _, stderr, code := runCLI(t, sampleLines, "log", "append", "-store", store, "-session", "s1"); code != exitOK {
		t.Fatalf("log append: exit %d, stderr %q", code, stderr)
	}
	cp, stderr, code := runCLI(t, "", "log", "checkpoint", "-store", store, "-session", "s1", "-signing-key", signing)
	if code != exitOK {
		t.Fatalf("log checkpoint: exit %d, stderr %q", code, stderr)
	}
	cpFile := writeFile(t, dir, "cp", cp)
	vkey, err := os.ReadFile(verifier)
	if err != nil {
		t.Fatal(err)
	}
	const wait = time.Second
	shortenInputWait(t, wait)

	// feed opens path for writing after delay, writes the pieces with
	// delay between them, then closes it unless stall is set.
	feed := func(path string, delay time.Duration, stall bool, pieces ...[]byte) {
		w, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		for _, p := range pieces {
			time.Sleep(delay)
			w.Write(p)
		}
		if stall {
			time.Sleep(wait + 2*time.Second)
		}
		w.Close()
	}
	verify := func(path string) []string {
		return []string{"log", "verify", "-store", store, "-session", "s1", "-checkpoint", cpFile, "-verifier-key", path}
	}

	t.Run("late writer within the wait", func(t *testing.T) {
		path, release := writerlessFIFO(t, t.TempDir(), "vkey")
		go func() {
			time.Sleep(wait / 4)
			feed(path, wait/4, false, vkey[:10], vkey[10:])
		}()
		if out, stderr, code := runWithin(t, wait+3*time.Second, release, verify(path)...); code != exitOK {
			t.Errorf("log verify -verifier-key from a late FIFO writer: exit %d, stdout %q, stderr %q; want 0", code, out, stderr)
		}
	})
	t.Run("stall past the wait", func(t *testing.T) {
		path, release := writerlessFIFO(t, t.TempDir(), "vkey")
		go feed(path, 0, true, vkey[:10])
		start := time.Now()
		_, stderr, code := runWithin(t, wait+3*time.Second, release, verify(path)...)
		took := time.Since(start)
		if code != exitFailed || !strings.Contains(stderr, "-verifier-key file") || !strings.Contains(stderr, "sent no end within 1s") || !strings.Contains(stderr, "code: config_invalid") {
			t.Errorf("log verify -verifier-key from a stalled FIFO: exit %d, stderr %q; want 1, sent no end within 1s, config_invalid", code, stderr)
		}
		if took < wait || took > wait+2*time.Second {
			t.Errorf("stalled FIFO refused after %v; want at inputWait (%v)", took, wait)
		}
	})
}
