package main

// Bad flags reported through textLine (wt-left3). In-process runs with
// no files: mock/isolated.

import (
	"strings"
	"testing"
)

// TestFlagErrorsCannotDriveTheTerminal: a bad flag's name or value is
// echoed by the flag package as given. For every command that parses
// flags, a flag name holding an OSC title sequence, BEL and U+202E, a
// bad flag syntax whose "value" holds them, and a 1 MiB flag name: exit
// 2, the error line quoted (textLine), no control or format character
// on stderr but the usage text's newlines and tabs, and stderr no longer
// than the usage text and a bounded error.
func TestFlagErrorsCannotDriveTheTerminal(t *testing.T) {
	words := [][]string{
		{"attester", "keygen"}, {"attester", "check"}, {"guard"}, {"log", "append"}, {"log", "list"}, {"log", "read"},
		{"log", "verify"}, {"log", "checkpoint"}, {"log", "keygen"}, {"process", "serve"}, {"process", "attach"},
		{"profile", "publish"}, {"profile", "diff"}, {"profile", "select"}, {"receipt", "sign"}, {"receipt", "verify"},
		{"version"}, {"matrix"},
	}
	const evil = "\x1b]0;evil\a\u202e"
	hostile := []struct {
		arg, want string
	}{
		{"-" + evil, `"flag provided but not defined: -\x1b]0;evil\a\u202e"`},
		{"--" + evil + "=1", `"flag provided but not defined: -\x1b]0;evil\a\u202e"`},
		{"-=" + evil, `"bad flag syntax: -=\x1b]0;evil\a\u202e"`},
		{"-" + strings.Repeat("A", 1<<20), `"flag provided but not defined: -AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"... (1048608 bytes)`},
	}
	for _, w := range words {
		_, usage, _ := runCLI(t, "", append(append([]string{}, w...), "-h")...)
		for _, h := range hostile {
			args := append(append([]string{}, w...), h.arg)
			_, stderr, code := runCLI(t, "", args...)
			name := strings.Join(w, " ")
			if code != exitUsage || !strings.Contains(stderr, "error: "+h.want+"\n") {
				t.Errorf("checkfu %s %.40q: exit %d, stderr %.300q; want 2 and error: %s", name, h.arg, code, stderr, h.want)
			}
			if i := strings.IndexFunc(stderr, func(r rune) bool {
				return r != '\n' && r != '\t' && (r < 0x20 || r == 0x7f || r == '\u202e')
			}); i >= 0 {
				t.Errorf("checkfu %s %.40q: stderr holds %q raw at %d: %.300q", name, h.arg, stderr[i], i, stderr)
			}
			if len(stderr) > len(usage)+200 {
				t.Errorf("checkfu %s %.40q: %d bytes of stderr, usage is %d", name, h.arg, len(stderr), len(usage))
			}
		}
	}
}

// TestUnknownCommandsAreBounded: an unknown command or subcommand is
// named in the error quoted and cut (checkfu.Quote), however long it is,
// and never raw.
func TestUnknownCommandsAreBounded(t *testing.T) {
	long := "\x1b]0;evil\a" + strings.Repeat("A", 1<<20)
	for _, args := range [][]string{{long}, {"attester", long}, {"log", long}, {"process", long}, {"profile", long}, {"receipt", long}} {
		_, stderr, code := runCLI(t, "", args...)
		if code != exitUsage || !strings.Contains(stderr, `"\x1b]0;evil\aAAAA`) || !strings.Contains(stderr, "(1048585 bytes)") {
			t.Errorf("checkfu %.20q: exit %d, stderr %.300q; want 2 and the name quoted and cut", args, code, stderr)
		}
		if len(stderr) > 4<<10 {
			t.Errorf("checkfu %.20q: %d bytes of stderr", args, len(stderr))
		}
	}
	// A stray argument to a command that takes none.
	for _, args := range [][]string{{"guard", long}, {"attester", "keygen", long}, {"version", long}} {
		_, stderr, code := runCLI(t, "", args...)
		if code != exitUsage || !strings.Contains(stderr, "takes no arguments") {
			t.Errorf("checkfu %.30q: exit %d, stderr %.300q; want 2 and the stray argument refused", args, code, stderr)
		}
		if len(stderr) > 4<<10 {
			t.Errorf("checkfu %.30q: %d bytes of stderr", args, len(stderr))
		}
	}
}
