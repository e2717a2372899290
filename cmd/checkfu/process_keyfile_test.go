package main

import (
	"errors"
	"flag"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/checkfu/checkfu"
)

// The CLI refuses, as ssh does, a -key file others may read or write and
// a -peer file others may write: a stranger who can write the pinned
// keys pins its own, and one who can read the private key is this side.
func TestProcessKeyFilePermissions(t *testing.T) {
	args := wireKeyArgs(t, "runner", "provider") // written 0600
	key, peer := args[1], args[3]
	load := func() error {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		a := addAuthFlags(fs, "provider")
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		_, err := a.keys("tcp")
		return err
	}
	if err := load(); err != nil {
		t.Fatalf("0600 key files: %v", err)
	}
	for _, tc := range []struct {
		file string
		mode os.FileMode
		ok   bool
	}{
		{key, 0o644, false}, {key, 0o640, false}, {key, 0o604, false}, {key, 0o400, true},
		{peer, 0o644, true}, {peer, 0o664, false}, {peer, 0o646, false},
	} {
		if err := os.Chmod(tc.file, tc.mode); err != nil {
			t.Fatal(err)
		}
		err := load()
		if tc.ok && err != nil {
			t.Errorf("%s at %#o: %v, want accepted", tc.file, tc.mode, err)
		}
		if !tc.ok && !errors.Is(err, checkfu.CodeConfigInvalid) {
			t.Errorf("%s at %#o: %v, want %s", tc.file, tc.mode, err, checkfu.CodeConfigInvalid)
		}
		var h hinted
		if !tc.ok && (!errors.As(err, &h) || !strings.Contains(h.hint, "chmod")) {
			t.Errorf("%s at %#o: %v, want a chmod hint", tc.file, tc.mode, err)
		}
		os.Chmod(tc.file, 0o600)
	}
}

// A key file owned by another user (not root) is refused whatever its
// mode: its owner can rewrite it, pinning their own key.
func TestProcessKeyFileOwnedByAnotherUser(t *testing.T) {
	args := wireKeyArgs(t, "runner", "provider")
	if os.Getuid() != 0 {
		// Our files are then another user's: act as uid+1.
		defer func(f func() int) { keyFileUser = f }(keyFileUser)
		keyFileUser = func() int { return os.Getuid() + 1 }
	}
	for _, file := range []string{args[1], args[3]} {
		if os.Getuid() == 0 {
			if err := os.Chown(file, 65534, 65534); err != nil {
				t.Fatal(err)
			}
		}
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		a := addAuthFlags(fs, "provider")
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		_, err := a.keys("tcp")
		if !errors.Is(err, checkfu.CodeConfigInvalid) {
			t.Errorf("%s owned by uid 65534: %v, want %s", file, err, checkfu.CodeConfigInvalid)
		}
		if os.Getuid() == 0 {
			os.Chown(file, 0, 0)
		}
	}
}
