package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/checkfu/checkfu/internal/clitest"
)

// runBinary runs the built checkfu binary, a black box, and returns its
// stdout, stderr and exit status.
func runBinary(t *testing.T, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(clitest.Binary(t), args...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

// TestLogListAndTable: "log list" prints each session of a store with
// its event count and head, as a table and as JSON lines; "log read
// -format table" prints one row per event, the denial with its code.
func TestLogListAndTable(t *testing.T) {
	store := "sqlite:" + filepath.Join(t.TempDir(), "log.db")
	heads := map[string]string{}
	for session, lines := range map[string]string{
		"s1": sampleLines,
		"s2": `{"kind":"denial","decision":"deny","code":"arguments_invalid","actor":"agent:2","label":"mock","tool":{"name":"gh.issue","revision":"2"}}` + "\n",
	} {
		out, stderr, code := runBinary(t, lines, "log", "append", "-store", store, "-session", session)
		if code != 0 {
			t.Fatalf("log append %s: exit %d, stderr %q", session, code, stderr)
		}
		acks := strings.Split(strings.TrimSpace(out), "\n")
		heads[session] = strings.Fields(acks[len(acks)-1])[3]
	}

	out, stderr, code := runBinary(t, "", "log", "list", "-store", store)
	if code != 0 {
		t.Fatalf("log list: exit %d, stderr %q", code, stderr)
	}
	want := regexp.MustCompile(`^SESSION +EVENTS +HEAD\ns1 +3 +` + heads["s1"] + `\ns2 +1 +` + heads["s2"] + `\n$`)
	if !want.MatchString(out) {
		t.Errorf("log list printed\n%s", out)
	}

	out, stderr, code = runBinary(t, "", "log", "list", "-store", store, "-format", "json")
	if code != 0 {
		t.Fatalf("log list -format json: exit %d, stderr %q", code, stderr)
	}
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var v struct {
			Session string `json:"session"`
			Events  int    `json:"events"`
			Head    string `json:"head"`
		}
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			t.Fatalf("log list -format json line %q: %v", line, err)
		}
		if v.Head != heads[v.Session] {
			t.Errorf("session %s head %s, want %s", v.Session, v.Head, heads[v.Session])
		}
		got = append(got, v.Session)
	}
	if strings.Join(got, " ") != "s1 s2" {
		t.Errorf("log list -format json listed %v", got)
	}

	out, stderr, code = runBinary(t, "", "log", "read", "-store", store, "-session", "s1", "-format", "table")
	if code != 0 {
		t.Fatalf("log read -format table: exit %d, stderr %q", code, stderr)
	}
	rows := strings.Split(strings.TrimSpace(out), "\n")
	wantRows := []string{
		`SEQ +KIND +DECISION +CODE +ACTOR +SUBJECT +RESULT`,
		`1 +tool_call +- +- +agent:1 +tool:gh.issue +-`,
		`2 +approval_decision +allow +- +- +approval:apr-1 +-`,
		`3 +approval_result +- +- +- +approval:apr-1 +ok`,
	}
	if len(rows) != len(wantRows) {
		t.Fatalf("log read -format table printed\n%s", out)
	}
	for i, w := range wantRows {
		if !regexp.MustCompile("^" + w + "$").MatchString(rows[i]) {
			t.Errorf("row %d = %q, want %s", i, rows[i], w)
		}
	}
	out, _, _ = runBinary(t, "", "log", "read", "-store", store, "-session", "s2", "-format", "table")
	if !regexp.MustCompile(`\n1 +denial +deny +arguments_invalid +agent:2 +tool:gh.issue +-\n$`).MatchString(out) {
		t.Errorf("log read -format table of a denial printed\n%s", out)
	}

	for _, args := range [][]string{
		{"log", "list"},
		{"log", "list", "-store", store, "-format", "xml"},
		{"log", "read", "-store", store, "-session", "s1", "-format", "xml"},
	} {
		if _, stderr, code := runBinary(t, "", args...); code != exitUsage {
			t.Errorf("checkfu %v: exit %d, want %d (stderr %q)", args, code, exitUsage, stderr)
		}
	}
	if _, stderr, code := runBinary(t, "", "log", "list", "-store", "sqlite:"+filepath.Join(t.TempDir(), "none.db")); code != exitFailed || !strings.Contains(stderr, "hint:") {
		t.Errorf("log list of a missing store: exit %d, stderr %q; want %d with a hint", code, stderr, exitFailed)
	}
}

// TestTableCellQuotesHostileText: a cell holding a space, a tab, a
// control character or invalid UTF-8 is printed quoted.
func TestTableCellQuotesHostileText(t *testing.T) {
	for in, want := range map[string]string{
		"":            "-",
		"agent:1":     "agent:1",
		"a b":         `"a b"`,
		"a\tb":        `"a\tb"`,
		"\x1b[2J":     `"\x1b[2J"`,
		"\xff":        `"\xff"`,
		"x\u202ey":    `"x\u202ey"`,
		"line\nbreak": `"line\nbreak"`,
	} {
		if got := cell(in); got != want {
			t.Errorf("cell(%q) = %s, want %s", in, got, want)
		}
	}
}
