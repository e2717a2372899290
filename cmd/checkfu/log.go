package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/mod/sumdb/note"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/eventlog"
	"github.com/checkfu/checkfu/eventlog/evidencelog"
	"github.com/checkfu/checkfu/eventlog/pglog"
	"github.com/checkfu/checkfu/eventlog/sqlitelog"
)

func init() {
	register(&command{"log", "list the sessions of, append to, read, verify and checkpoint session event logs", runLog})
}

func runLog(e *env, args []string) error {
	return subcommands(e, "log", args, map[string]func(*env, []string) error{
		"append":     logAppend,
		"list":       logList,
		"read":       logRead,
		"verify":     logVerify,
		"checkpoint": logCheckpoint,
		"keygen":     logKeygen,
	})
}

// maxLine bounds one JSON event line of "log append".
const maxLine = 4 << 20

// logFlags are the flags every "log" subcommand shares.
type logFlags struct {
	store   string
	session string
}

func (f *logFlags) register(e *env, name, usage string) *flag.FlagSet {
	fs := newFlagSet(e, "log "+name, usage)
	fs.StringVar(&f.store, "store", "", "the log store: sqlite:PATH or a postgres:// URL")
	fs.StringVar(&f.session, "session", "", "the session id")
	return fs
}

// check reports a missing store or session as a usage error.
func (f *logFlags) check(name string) error {
	if f.store == "" {
		return usagef("checkfu log %s: -store is required (sqlite:PATH or postgres://...)", name)
	}
	if f.session == "" {
		return usagef("checkfu log %s: -session is required", name)
	}
	return nil
}

// openStore opens the store a -store DSN names. Only append may create a
// SQLite file: reading or verifying a mistyped path must not report an
// empty, freshly created log.
func openStore(ctx context.Context, dsn string, create bool) (eventlog.Store, error) {
	switch {
	case strings.HasPrefix(dsn, "sqlite:"):
		path := strings.TrimPrefix(dsn, "sqlite:")
		if path == "" {
			return nil, usagef("checkfu log: -store %q names no file (want sqlite:PATH)", dsn)
		}
		if !create {
			if _, err := os.Stat(path); err != nil {
				return nil, withHint(fmt.Errorf("checkfu log: no log database at %q: %w", path, err), "check the -store path; only \"checkfu log append\" creates a log")
			}
		}
		return sqlitelog.Open(ctx, path)
	case strings.HasPrefix(dsn, "postgres://"), strings.HasPrefix(dsn, "postgresql://"):
		s, err := pglog.Open(ctx, dsn)
		return s, withHint(err, "check that PostgreSQL is reachable and the DSN is right")
	}
	return nil, usagef("checkfu log: -store must be sqlite:PATH or a postgres:// URL (got %s)", dsnScheme(dsn))
}

// maxSchemeLen bounds the scheme dsnScheme echoes.
const maxSchemeLen = 16

// dsnScheme describes a -store value it refuses by its scheme alone: the
// letters, digits, '+', '-' and '.' before its first ':', at most
// maxSchemeLen of them. Nothing after the scheme is echoed, since the
// rest of a DSN may hold a password, and a cut at a fixed length would
// still print a short one ("pg://:pw@h").
func dsnScheme(dsn string) string {
	scheme, _, found := strings.Cut(dsn, ":")
	valid := found && scheme != "" && len(scheme) <= maxSchemeLen && strings.IndexFunc(scheme, func(r rune) bool {
		return !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '+' || r == '-' || r == '.')
	}) < 0
	if !valid {
		return "a value with no scheme"
	}
	return "scheme " + strconv.Quote(scheme)
}

// readKeys loads a workspace master key: 64 hex digits in a file of at
// most maxKeyFile bytes that no other user may read or write.
func readKeys(path string) (*eventlog.Keys, error) {
	if path == "" {
		return nil, nil
	}
	b, err := readKeyFile("-key-file", path, true, maxKeyFile)
	if err != nil {
		return nil, withHint(fmt.Errorf("checkfu log: read key file: %w", err), "pass -key-file a file holding 64 hex digits")
	}
	defer clear(b)
	raw, err := hex.DecodeString(string(bytes.TrimSpace(b)))
	if err != nil || len(raw) != eventlog.KeySize {
		return nil, withHint(checkfu.Refuse(checkfu.CodeConfigInvalid, "checkfu log: key file %q does not hold %d bytes in hex", path, eventlog.KeySize),
			"generate one, readable by this user alone, with: (umask 077; head -c 32 /dev/urandom | xxd -p -c 64 > master.key)")
	}
	defer clear(raw)
	return eventlog.NewKeys(raw)
}

func logAppend(e *env, args []string) error {
	var lf logFlags
	var keyFile, signingKey, checkpointOut string
	var zdr bool
	fs := lf.register(e, "append", "-store DSN -session ID [-key-file F] [-zdr] [-signing-key F -checkpoint-out F] < events.jsonl")
	fs.StringVar(&keyFile, "key-file", "", "file with the workspace master key (64 hex digits); required for events with content")
	fs.BoolVar(&zdr, "zdr", false, "zero data retention: keep only a keyed digest of content, never the content")
	fs.StringVar(&signingKey, "signing-key", "", "file with the log's note signing key, to sign a checkpoint at the end of the input")
	fs.StringVar(&checkpointOut, "checkpoint-out", "", "file to write the signed checkpoint of the session to, once the input ends")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := lf.check("append"); err != nil {
		return err
	}
	if (signingKey == "") != (checkpointOut == "") {
		return usagef("checkfu log append: -signing-key and -checkpoint-out go together")
	}
	keys, err := readKeys(keyFile)
	if err != nil {
		return err
	}
	var signer note.Signer
	if signingKey != "" {
		if signer, err = readSigner(signingKey); err != nil {
			return err
		}
	}
	ctx := context.Background()
	store, err := openStore(ctx, lf.store, true)
	if err != nil {
		return err
	}
	defer store.Close()
	l, err := eventlog.New(store, eventlog.Options{Keys: keys, ZeroDataRetention: zdr, Signer: signer})
	if err != nil {
		return withHint(err, "-zdr needs -key-file for the keyed content digests")
	}
	// Lines that are already buffered are appended together, in order,
	// in one transaction; each "seq N hash H" is printed once that
	// transaction has committed.
	in := bufio.NewReaderSize(e.stdin, 64<<10)
	app := &cliAppender{log: l, session: lf.session, out: e.stdout}
	n := 0
	for {
		var batch []eventlog.Event
		first := n + 1
		var lineErr error
		for len(batch) < maxCLIBatch {
			if len(batch) > 0 && !lineReady(in) {
				break
			}
			line, err := readLine(in)
			if err == io.EOF {
				lineErr = io.EOF
				break
			}
			n++
			if err != nil {
				lineErr = fmt.Errorf("checkfu log append: line %d: %w", n, err)
				break
			}
			if len(bytes.TrimSpace(line)) == 0 {
				continue
			}
			ev, err := eventlog.DecodeEvent(line)
			if err != nil {
				lineErr = withHint(fmt.Errorf("checkfu log append: line %d: %w", n, err), "the events before this line are stored; fix the line and append the rest")
				break
			}
			if keys == nil && len(ev.Content) > 0 {
				err := checkfu.Refuse(eventlog.CodeContentKeyMissing, "event has content but no -key-file was given to seal it")
				lineErr = withHint(fmt.Errorf("checkfu log append: line %d: %w", n, err), "pass -key-file FILE (64 hex digits) to seal content, with -zdr to keep only a keyed digest; the events before this line are stored")
				break
			}
			batch = append(batch, ev)
		}
		if len(batch) > 0 {
			if err := app.append(ctx, batch); err != nil {
				return withHint(fmt.Errorf("checkfu log append: lines %d-%d: %w", first, n, err), "the events acknowledged with \"seq N hash H\" are stored; append the rest again")
			}
		}
		if lineErr == io.EOF {
			if checkpointOut == "" {
				return nil
			}
			return writeCheckpoint(ctx, l, lf.session, checkpointOut)
		}
		if lineErr != nil {
			return lineErr
		}
	}
}

// maxCLIBatch bounds the events "log append" commits in one transaction.
const maxCLIBatch = 1024

// lineReady reports whether r holds a whole line without reading more.
func lineReady(r *bufio.Reader) bool {
	b, _ := r.Peek(r.Buffered())
	return bytes.IndexByte(b, '\n') >= 0
}

// A cliAppender appends batches in input order and acknowledges each
// event after its batch is durable.
type cliAppender struct {
	log     *eventlog.Log
	session string
	out     io.Writer
	head    eventlog.Head
	known   bool
}

func (a *cliAppender) append(ctx context.Context, batch []eventlog.Event) error {
	for attempt := 0; ; attempt++ {
		if !a.known {
			h, err := a.log.Head(ctx, a.session)
			if err != nil {
				return err
			}
			a.head, a.known = h, true
		}
		heads, err := a.log.AppendBatch(ctx, a.session, a.head.Seq, batch...)
		if errors.Is(err, eventlog.CodeSeqConflict) && attempt < 100 {
			a.known = false // another writer appended; go again after it
			continue
		}
		if err != nil {
			return err
		}
		var acks bytes.Buffer
		for _, h := range heads {
			fmt.Fprintf(&acks, "seq %d hash %s\n", h.Seq, h.Hash)
		}
		a.head = heads[len(heads)-1]
		_, err = a.out.Write(acks.Bytes())
		return err
	}
}

// readLine returns the next line without its newline, io.EOF at the end,
// and an error for a line longer than maxLine.
func readLine(r *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > maxLine {
			return nil, checkfu.Refuse(eventlog.CodeEventInvalid, "line longer than %d bytes", maxLine)
		}
		switch {
		case err == nil:
			return bytes.TrimSuffix(line, []byte("\n")), nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err == io.EOF && len(line) > 0:
			return line, nil
		default:
			return nil, err
		}
	}
}

func logRead(e *env, args []string) error {
	var lf logFlags
	var from uint64
	var follow bool
	var format, keyFile string
	fs := lf.register(e, "read", "-store DSN -session ID [-from N] [-follow] [-format json|table] [-key-file F]")
	fs.StringVar(&keyFile, "key-file", "", "file with the workspace master key (64 hex digits): with -format json, add each event's operator part (the cause of a failure) as \"operator\"")
	fs.Uint64Var(&from, "from", 1, "the first seq to print")
	fs.BoolVar(&follow, "follow", false, "keep printing events as writers append them, until interrupted")
	fs.StringVar(&format, "format", "json", "json (one entry per line), or table")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := lf.check("read"); err != nil {
		return err
	}
	if err := checkFormat("read", format); err != nil {
		return err
	}
	ctx := context.Background()
	if follow {
		var stop context.CancelFunc
		ctx, stop = signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
		defer stop()
	}
	store, err := openStore(ctx, lf.store, false)
	if err != nil {
		return err
	}
	defer store.Close()
	keys, err := readKeys(keyFile)
	if err != nil {
		return err
	}
	l, err := eventlog.New(store, eventlog.Options{Keys: keys})
	if err != nil {
		return err
	}
	read := l.Read
	if follow {
		read = l.Follow
	}
	out := bufio.NewWriter(e.stdout)
	defer out.Flush()
	printed := false
	var table *tableWriter
	if format == "table" {
		table = newTableWriter(out)
		defer table.flush()
	}
	for entry, err := range read(ctx, lf.session, from) {
		printed = true
		if err != nil {
			if table != nil {
				table.flush()
			}
			out.Flush()
			if follow && errors.Is(err, context.Canceled) {
				return nil
			}
			return err
		}
		if table != nil {
			table.write(entry)
			if follow {
				table.flush()
			}
		} else {
			b, err := json.Marshal(entry)
			if err != nil {
				return err
			}
			if keys != nil {
				b = withOperator(ctx, l, lf.session, entry, b)
			}
			out.Write(b)
			out.WriteByte('\n')
		}
		if follow {
			if err := out.Flush(); err != nil {
				return err
			}
		}
	}
	if !printed && !follow {
		// Nothing past -from: fine for a session that holds events, an
		// error for one that holds none, as log verify says.
		for _, err := range l.Read(ctx, lf.session, 1) {
			return err
		}
		return withHint(checkfu.Refuse(eventlog.CodeEventNotFound, "checkfu log read: session %q holds no events", lf.session), "check -session: \"checkfu log verify\" refuses the same session")
	}
	return nil
}

// withOperator returns b, the JSON of entry, with its operator part
// (evidencelog.Operator: the cause of a failure) added as "operator"
// when the entry's sealed content is one. Any other content (execution
// content: arguments, outputs) is not printed.
func withOperator(ctx context.Context, l *eventlog.Log, session string, entry eventlog.Entry, b []byte) []byte {
	if entry.ContentMode != eventlog.ContentSealed || entry.Shredded || len(b) == 0 || b[len(b)-1] != '}' {
		return b
	}
	content, err := l.Content(ctx, session, entry.Seq)
	if err != nil {
		return b
	}
	op, err := evidencelog.ParseOperator(content)
	if err != nil {
		return b
	}
	ob, err := json.Marshal(op)
	if err != nil {
		return b
	}
	return append(append(append(b[:len(b)-1:len(b)-1], `,"operator":`...), ob...), '}')
}

func logVerify(e *env, args []string) error {
	var lf logFlags
	var headFlag, checkpointFile, verifierFile, keyFile string
	fs := lf.register(e, "verify", "-store DSN -session ID [-key-file F] [-head SEQ:HASH] [-checkpoint FILE -verifier-key FILE]")
	fs.StringVar(&keyFile, "key-file", "", "file with the workspace master key (64 hex digits): also check that every shred event was made by a holder of the key")
	fs.StringVar(&headFlag, "head", "", "a head recorded earlier (SEQ:HASH) the log must still hold; catches truncation")
	fs.StringVar(&checkpointFile, "checkpoint", "", "a signed checkpoint (from \"checkfu log checkpoint\") the log must still extend; catches truncation and rollback")
	fs.StringVar(&verifierFile, "verifier-key", "", "file with the verifier key of the checkpoint's signer (from \"checkfu log keygen\")")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := lf.check("verify"); err != nil {
		return err
	}
	if err := refuseEmpty(fs, "key-file", "head", "checkpoint", "verifier-key"); err != nil {
		return err
	}
	want, err := parseHead(headFlag)
	if err != nil {
		return err
	}
	keys, err := readKeys(keyFile)
	if err != nil {
		return err
	}
	if (checkpointFile == "") != (verifierFile == "") {
		return usagef("checkfu log verify: -checkpoint and -verifier-key go together")
	}
	var checkpoint []byte
	var verifiers note.Verifiers
	if checkpointFile != "" {
		if checkpoint, verifiers, err = readCheckpoint(checkpointFile, verifierFile); err != nil {
			return err
		}
	}
	ctx := context.Background()
	store, err := openStore(ctx, lf.store, false)
	if err != nil {
		return err
	}
	defer store.Close()
	var head eventlog.Head
	if keys != nil {
		l, lerr := eventlog.New(store, eventlog.Options{Keys: keys})
		if lerr != nil {
			return lerr
		}
		_, err = l.Verify(ctx, lf.session)
	}
	if err == nil {
		head, err = eventlog.VerifyHead(ctx, store, lf.session, want)
	}
	if err == nil && checkpoint != nil {
		head, err = eventlog.VerifyCheckpoint(ctx, store, lf.session, checkpoint, verifiers)
	}
	var ce *eventlog.ChainError
	if errors.As(err, &ce) {
		fmt.Fprintf(e.stdout, "first bad seq: %d\n", ce.Seq)
		return withHint(err, "the log was changed after it was written; keep it as evidence and compare with a backup, a recorded head or a checkpoint")
	}
	if err != nil {
		return err
	}
	if head.Seq == 0 {
		return withHint(checkfu.Refuse(eventlog.CodeEventNotFound, "checkfu log verify: session %q holds no events", lf.session), "check -session: an empty log proves nothing")
	}
	fmt.Fprintf(e.stdout, "ok: session %s verified through seq %d, head %s\n", lf.session, head.Seq, head.Hash)
	return nil
}

// parseHead parses "SEQ:HASH"; the empty string is no head.
func parseHead(s string) (eventlog.Head, error) {
	if s == "" {
		return eventlog.Head{}, nil
	}
	seqText, hashText, ok := strings.Cut(s, ":")
	seq, err := strconv.ParseUint(seqText, 10, 64)
	var h eventlog.Hash
	if !ok || err != nil || seq == 0 || h.UnmarshalText([]byte(hashText)) != nil {
		return eventlog.Head{}, usagef("checkfu log verify: -head %q is not SEQ:HASH (a seq from 1 and 64 hex digits)", s)
	}
	return eventlog.Head{Seq: seq, Hash: h}, nil
}
