package main

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/checkfu/checkfu/eventlog"
	"github.com/checkfu/checkfu/eventlog/pglog"
	"github.com/checkfu/checkfu/eventlog/sqlitelog"
	"github.com/checkfu/checkfu/internal/clitest"
	"github.com/checkfu/checkfu/internal/pgtest"
)

const sampleLines = `{"kind":"tool_call","actor":"agent:1","label":"isolated","tool":{"name":"gh.issue","revision":"2"},"request_id":"req-9"}
{"kind":"approval_decision","decision":"allow","approval_id":"apr-1","label":"production"}

{"kind":"approval_result","approval_id":"apr-1","effect_id":"eff-1","result":"ok"}
`

// ackLine is one acknowledgement of "log append".
var ackLine = regexp.MustCompile(`^seq ([0-9]+) hash [0-9a-f]{64}$`)

// ackedSeqs returns the seqs "log append" acknowledged in out, joined by
// spaces, or a description of the first line that is not an
// acknowledgement.
func ackedSeqs(out string) string {
	var seqs []string
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		m := ackLine.FindStringSubmatch(line)
		if m == nil {
			return fmt.Sprintf("not an acknowledgement: %q", line)
		}
		seqs = append(seqs, m[1])
	}
	return strings.Join(seqs, " ")
}

func TestLogAppendReadVerify(t *testing.T) {
	store := "sqlite:" + filepath.Join(t.TempDir(), "log.db")
	out, stderr, code := runCLI(t, sampleLines, "log", "append", "-store", store, "-session", "s1")
	if code != 0 || ackedSeqs(out) != "1 2 3" {
		t.Fatalf("log append: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	out, stderr, code = runCLI(t, "", "log", "read", "-store", store, "-session", "s1", "-from", "2")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 2 || !strings.Contains(lines[0], `"seq":2`) || !strings.Contains(lines[0], `"decision":"allow"`) || !strings.Contains(lines[1], `"effect_id":"eff-1"`) {
		t.Fatalf("log read -from 2: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	out, stderr, code = runCLI(t, "", "log", "verify", "-store", store, "-session", "s1")
	if code != 0 || !strings.HasPrefix(out, "ok: session s1 verified through seq 3, head ") {
		t.Fatalf("log verify: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
}

// TestLogReadAgreesWithVerify runs the real binary: for a session that
// holds no events (a typo of -session), log read fails with
// event_not_found as log verify does, rather than printing nothing and
// exiting 0; a read past the head of a session that holds events prints
// nothing and succeeds.
func TestLogReadAgreesWithVerify(t *testing.T) {
	store := "sqlite:" + filepath.Join(t.TempDir(), "log.db")
	if out, stderr, code := runCLI(t, sampleLines, "log", "append", "-store", store, "-session", "s1"); code != 0 {
		t.Fatalf("log append: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	cli := func(args ...string) (string, string, int) {
		cmd := exec.Command(clitest.Binary(t), args...)
		var out, errb strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		if err != nil && cmd.ProcessState == nil {
			t.Fatal(err)
		}
		return out.String(), errb.String(), cmd.ProcessState.ExitCode()
	}
	for _, sub := range []string{"read", "verify"} {
		out, stderr, code := cli("log", sub, "-store", store, "-session", "s1-typo")
		if code != exitFailed || !strings.Contains(stderr, "event_not_found") {
			t.Errorf("log %s -session s1-typo: exit %d, stdout %q, stderr %q; want %d and event_not_found", sub, code, out, stderr, exitFailed)
		}
	}
	if out, stderr, code := cli("log", "read", "-store", store, "-session", "s1", "-from", "4"); code != exitOK || out != "" {
		t.Errorf("log read -from 4 of a 3-event session: exit %d, stdout %q, stderr %q; want 0 and nothing", code, out, stderr)
	}
}

func TestLogAppendStrictInput(t *testing.T) {
	tests := []struct {
		name, line, code string
	}{
		{"unknown field", `{"kind":"denial","secret":"x"}`, "event_invalid"},
		{"duplicate field", `{"kind":"denial","kind":"skip"}`, "event_invalid"},
		{"case-folded field", `{"Kind":"denial"}`, "event_invalid"},
		{"unknown kind", `{"kind":"reboot"}`, "event_invalid"},
		{"free text in an identifier", `{"kind":"denial","code":"permission denied for alice"}`, "event_invalid"},
		{"trailing data", `{"kind":"denial"} {}`, "event_invalid"},
		{"content without a key", `{"kind":"tool_call","content":"args"}`, "content_key_missing"},
	}
	for _, tt := range tests {
		store := "sqlite:" + filepath.Join(t.TempDir(), "log.db")
		in := `{"kind":"skip","code":"memory_writeback_skipped"}` + "\n" + tt.line + "\n" + `{"kind":"skip"}` + "\n"
		out, stderr, code := runCLI(t, in, "log", "append", "-store", store, "-session", "s")
		if code != exitFailed || ackedSeqs(out) != "1" || !strings.Contains(stderr, "line 2") || !strings.Contains(stderr, "code: "+tt.code) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 1 after seq 1 with code %s", tt.name, code, out, stderr, tt.code)
		}
		if strings.Contains(stderr, "alice") {
			t.Errorf("%s: the error quotes the offending text: %q", tt.name, stderr)
		}
		// Nothing already accepted is lost.
		out, _, _ = runCLI(t, "", "log", "verify", "-store", store, "-session", "s")
		if !strings.Contains(out, "through seq 1,") {
			t.Errorf("%s: after the refusal, verify says %q, want seq 1 kept", tt.name, out)
		}
	}
}

func TestLogReadVerifyDoNotCreate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "typo.db")
	for _, sub := range []string{"read", "verify"} {
		out, stderr, code := runCLI(t, "", "log", sub, "-store", "sqlite:"+path, "-session", "s")
		if code != exitFailed || out != "" || !strings.Contains(stderr, "no log database") {
			t.Errorf("log %s on a missing file: exit %d, stdout %q, stderr %q", sub, code, out, stderr)
		}
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("read/verify created %s", path)
	}
	store := "sqlite:" + filepath.Join(t.TempDir(), "log.db")
	runCLI(t, sampleLines, "log", "append", "-store", store, "-session", "s1")
	out, stderr, code := runCLI(t, "", "log", "verify", "-store", store, "-session", "s2")
	if code != exitFailed || !strings.Contains(stderr, "code: event_not_found") {
		t.Errorf("log verify of an empty session: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
}

func TestLogAppendRefusesHugeLine(t *testing.T) {
	store := "sqlite:" + filepath.Join(t.TempDir(), "log.db")
	in := `{"kind":"skip"}` + "\n" + `{"kind":"skip","code":"` + strings.Repeat("x", maxLine) + `"}` + "\n"
	out, stderr, code := runCLI(t, in, "log", "append", "-store", store, "-session", "s")
	if code != exitFailed || ackedSeqs(out) != "1" || !strings.Contains(stderr, "line 2: refused: event_invalid: line longer than") {
		t.Errorf("huge line: exit %d, stdout %q, stderr %.200q", code, out, stderr)
	}
}

func TestLogUsage(t *testing.T) {
	for _, args := range [][]string{
		{"log"},
		{"log", "frobnicate"},
		{"log", "append", "-session", "s"},
		{"log", "read", "-store", "sqlite:x.db"},
		{"log", "verify", "-store", "mysql://x", "-session", "s"},
		{"log", "verify", "-store", "sqlite:x.db", "-session", "s", "-head", "3:zz"},
	} {
		if _, stderr, code := runCLI(t, "", args...); code != exitUsage {
			t.Errorf("checkfu %v: exit %d, want %d (stderr %q)", args, code, exitUsage, stderr)
		}
	}
	for _, sub := range []string{"append", "read", "verify"} {
		if _, stderr, code := runCLI(t, "", "log", sub, "-h"); code != 0 || !strings.HasPrefix(stderr, "usage: checkfu log "+sub) {
			t.Errorf("checkfu log %s -h: exit %d, stderr %q", sub, code, stderr)
		}
	}
}

func TestLogSealedContentAndZDR(t *testing.T) {
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "key")
	if err := os.WriteFile(keyFile, []byte(strings.Repeat("ab", 32)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, zdr := range []bool{false, true} {
		store := "sqlite:" + filepath.Join(dir, fmt.Sprintf("log-%v.db", zdr))
		args := []string{"log", "append", "-store", store, "-session", "s", "-key-file", keyFile}
		if zdr {
			args = append(args, "-zdr")
		}
		out, stderr, code := runCLI(t, `{"kind":"tool_call","content":"{\"path\":\"/etc/hosts\"}"}`+"\n", args...)
		if code != 0 || ackedSeqs(out) != "1" {
			t.Fatalf("zdr=%v: exit %d, stdout %q, stderr %q", zdr, code, out, stderr)
		}
		out, _, _ = runCLI(t, "", "log", "read", "-store", store, "-session", "s")
		want := `"content_mode":"sealed"`
		if zdr {
			want = `"content_mode":"digest_only"`
		}
		if !strings.Contains(out, want) || strings.Contains(out, "/etc/hosts") {
			t.Errorf("zdr=%v: read printed %q, want %s and no content", zdr, out, want)
		}
	}
}

func TestLogVerifyDetectsEditedRow(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log.db")
	store := "sqlite:" + path
	if _, stderr, code := runCLI(t, sampleLines, "log", "append", "-store", store, "-session", "s1"); code != 0 {
		t.Fatal(stderr)
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`UPDATE eventlog_events SET envelope = replace(envelope, CAST('apr-1' AS BLOB), CAST('apr-2' AS BLOB)) WHERE seq = 2`); err != nil {
		t.Fatal(err)
	}
	out, stderr, code := runCLI(t, "", "log", "verify", "-store", store, "-session", "s1")
	if code != exitFailed || out != "first bad seq: 2\n" || !strings.Contains(stderr, "code: chain_broken") {
		t.Fatalf("log verify after an edit: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	// read stops at the bad record too, after printing the good one.
	out, stderr, code = runCLI(t, "", "log", "read", "-store", store, "-session", "s1")
	if code != exitFailed || strings.Count(out, "\n") != 1 || !strings.Contains(stderr, "chain broken at seq 2") {
		t.Fatalf("log read after an edit: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
}

// TestLogAppendSurvivesKill runs the real binary as a writer, feeds it
// events, and SIGKILLs it mid-stream: every seq it acknowledged is in the
// log, and the chain verifies (with the real binary too).
func TestLogAppendSurvivesKill(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "log.db")
		testSurvivesKill(t, "sqlite:"+path, func() (eventlog.Store, error) { return sqlitelog.Open(context.Background(), path) })
	})
	t.Run("postgres", func(t *testing.T) {
		dsn := pgDSN(t)
		testSurvivesKill(t, dsn, func() (eventlog.Store, error) { return pglog.Open(context.Background(), dsn) })
	})
}

func testSurvivesKill(t *testing.T, store string, reopen func() (eventlog.Store, error)) {
	bin := clitest.Binary(t)
	cmd := exec.Command(bin, "log", "append", "-store", store, "-session", "crash")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	feederDone := make(chan struct{})
	go func() {
		defer close(feederDone)
		for i := 0; ; i++ {
			line := fmt.Sprintf(`{"kind":"process_started","process_id":"p-%d","label":"isolated"}`+"\n", i)
			if _, err := io.WriteString(stdin, line); err != nil {
				return // the writer is dead
			}
		}
	}()
	acked := uint64(0)
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		var seq uint64
		if _, err := fmt.Sscanf(sc.Text(), "seq %d", &seq); err != nil || seq != acked+1 {
			t.Fatalf("ack %q after seq %d", sc.Text(), acked)
		}
		acked = seq
		if acked == 150 {
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			break
		}
	}
	// Drain acks already written before the kill landed.
	for sc.Scan() {
		var seq uint64
		if _, err := fmt.Sscanf(sc.Text(), "seq %d", &seq); err == nil && seq == acked+1 {
			acked = seq
		}
	}
	err = cmd.Wait()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("writer ended with %v, want killed by SIGKILL", err)
	}
	stdin.Close()
	<-feederDone

	s, err := reopen()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	head, err := eventlog.Verify(context.Background(), s, "crash")
	if err != nil {
		t.Fatalf("Verify after kill -9: %v", err)
	}
	if head.Seq < acked {
		t.Fatalf("after kill -9 the log ends at seq %d, but seq %d was acknowledged", head.Seq, acked)
	}
	t.Logf("acknowledged %d, stored %d", acked, head.Seq)
	out, err := exec.Command(bin, "log", "verify", "-store", store, "-session", "crash").CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "ok: session crash verified through seq ") {
		t.Fatalf("checkfu log verify after kill -9: %v\n%s", err, out)
	}
}

// pgDSN returns a postgres:// DSN for a fresh schema, dropped at the end.
// It skips without CHECKFU_TEST_POSTGRES_DSN, and fails instead under CI.
func pgDSN(t *testing.T) string {
	t.Helper()
	dsn := pgtest.SchemaDSN(t, "evlogcli_")
	if !strings.HasPrefix(dsn, "postgres://") && !strings.HasPrefix(dsn, "postgresql://") {
		t.Fatalf("%s is not a postgres:// URL", pgtest.EnvDSN)
	}
	return dsn
}

func TestLogPostgres(t *testing.T) {
	store := pgDSN(t)
	out, stderr, code := runCLI(t, sampleLines, "log", "append", "-store", store, "-session", "s1")
	if code != 0 || ackedSeqs(out) != "1 2 3" {
		t.Fatalf("log append: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	out, stderr, code = runCLI(t, "", "log", "read", "-store", store, "-session", "s1")
	if code != 0 || strings.Count(out, "\n") != 3 || !strings.Contains(out, `"seq":3`) {
		t.Fatalf("log read: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	out, stderr, code = runCLI(t, "", "log", "verify", "-store", store, "-session", "s1")
	if code != 0 || !strings.HasPrefix(out, "ok: session s1 verified through seq 3") {
		t.Fatalf("log verify: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
}

// TestLogReadFollow runs "log read -follow" as a real process and appends
// from this process while it runs: it prints each event as it lands and
// exits 0 on SIGINT.
func TestLogReadFollow(t *testing.T) {
	bin := clitest.Binary(t)
	path := filepath.Join(t.TempDir(), "log.db")
	ctx := context.Background()
	s, err := sqlitelog.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	l, err := eventlog.New(s, eventlog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	appendOne := func() {
		if _, err := l.Append(ctx, "f", eventlog.Event{Kind: eventlog.KindToolCall, Actor: "a"}); err != nil {
			t.Fatal(err)
		}
	}
	appendOne()
	cmd := exec.Command(bin, "log", "read", "-store", "sqlite:"+path, "-session", "f", "-follow")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	sc := bufio.NewScanner(stdout)
	for want := 1; want <= 3; want++ {
		if !sc.Scan() {
			t.Fatalf("follower ended before seq %d: %v", want, sc.Err())
		}
		if !strings.Contains(sc.Text(), fmt.Sprintf(`"seq":%d,`, want)) {
			t.Fatalf("follower printed %q, want seq %d", sc.Text(), want)
		}
		appendOne()
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, stdout)
	if err := cmd.Wait(); err != nil {
		t.Errorf("follower after SIGINT: %v, want exit 0", err)
	}
}

// TestLogTwoWritersOneFile runs two real "log append" processes against
// one SQLite file at once: every event of both is stored exactly once, in
// one verified chain.
func TestLogTwoWritersOneFile(t *testing.T) {
	bin := clitest.Binary(t)
	path := filepath.Join(t.TempDir(), "log.db")
	const perWriter = 300
	errs := make(chan error, 2)
	for w := range 2 {
		go func() {
			var in strings.Builder
			for i := range perWriter {
				fmt.Fprintf(&in, `{"kind":"tool_call","actor":"writer-%d","request_id":"r-%d"}`+"\n", w, i)
			}
			cmd := exec.Command(bin, "log", "append", "-store", "sqlite:"+path, "-session", "shared")
			cmd.Stdin = strings.NewReader(in.String())
			out, err := cmd.Output()
			if err == nil && strings.Count(string(out), "seq ") != perWriter {
				err = fmt.Errorf("writer %d acknowledged %d events, want %d", w, strings.Count(string(out), "seq "), perWriter)
			}
			errs <- err
		}()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	out, stderr, code := runCLI(t, "", "log", "verify", "-store", "sqlite:"+path, "-session", "shared")
	if code != 0 || !strings.Contains(out, fmt.Sprintf("through seq %d,", 2*perWriter)) {
		t.Fatalf("log verify: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
}

// TestLogReadShowsTheOperatorPart: with -key-file, log read adds an
// event's operator part (the cause a failed call's event seals) as
// "operator"; without it, and for execution content, nothing of the
// content is printed.
func TestLogReadShowsTheOperatorPart(t *testing.T) {
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "key")
	if err := os.WriteFile(keyFile, []byte(strings.Repeat("ab", 32)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	store := "sqlite:" + filepath.Join(dir, "log.db")
	in := `{"kind":"tool_call","code":"upstream_failed","result":"failed","content":"{\"cause\":\"\\\"x509: certificate is valid for example.com, not api.example.net\\\"\"}"}` + "\n" +
		`{"kind":"tool_call","content":"{\"path\":\"/etc/hosts\"}"}` + "\n"
	if out, stderr, code := runCLI(t, in, "log", "append", "-store", store, "-session", "s", "-key-file", keyFile); code != 0 || ackedSeqs(out) != "1 2" {
		t.Fatalf("append: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	out, stderr, code := runCLI(t, "", "log", "read", "-store", store, "-session", "s", "-key-file", keyFile)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 2 || !strings.Contains(lines[0], `"operator":{"cause":"\"x509: certificate is valid for example.com, not api.example.net\""}`) ||
		strings.Contains(lines[1], "operator") || strings.Contains(out, "/etc/hosts") {
		t.Fatalf("read -key-file: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	out, _, _ = runCLI(t, "", "log", "read", "-store", store, "-session", "s")
	if strings.Contains(out, "x509") || strings.Contains(out, "operator") {
		t.Errorf("read without a key printed the operator part: %q", out)
	}
}
