package pglog_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/checkfu/checkfu/eventlog"
	"github.com/checkfu/checkfu/eventlog/eventlogtest"
	"github.com/checkfu/checkfu/eventlog/internal/sqllogtest"
	"github.com/checkfu/checkfu/eventlog/pglog"
	"github.com/checkfu/checkfu/internal/pgtest"
)

// testDSN returns a DSN for a fresh schema of the CI PostgreSQL, dropped
// when the test ends. Without CHECKFU_TEST_POSTGRES_DSN it skips, except
// under CI, where it fails: the suite must run there.
func testDSN(t testing.TB) string {
	t.Helper()
	return pgtest.SchemaDSN(t, "evlog_")
}

func openAt(t testing.TB, dsn string) *pglog.Store {
	t.Helper()
	return sqllogtest.Open(t, func(ctx context.Context) (*pglog.Store, error) { return pglog.Open(ctx, dsn) })
}

// execAll runs stmts in one transaction on a connection of its own.
func execAll(dsn string, stmts []sqllogtest.Stmt) error {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	batch := &pgx.Batch{}
	for _, st := range stmts {
		batch.Queue(st.Query, st.Args...)
	}
	return pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error { return tx.SendBatch(ctx, batch).Close() })
}

func TestPostgresStore(t *testing.T) {
	eventlogtest.TestStore(t, func(t *testing.T) eventlogtest.Harness {
		dsn := testDSN(t)
		return sqllogtest.Harness(func(t *testing.T) eventlog.Store { return openAt(t, dsn) },
			func(stmts []sqllogtest.Stmt) error { return execAll(dsn, stmts) })
	})
}

// TestZeroDataRetentionRows appends content to a zero-data-retention log
// and reads back every column of every row of the schema as text: the
// content and its bare SHA-256 appear nowhere.
func TestZeroDataRetentionRows(t *testing.T) {
	ctx := context.Background()
	dsn := testDSN(t)
	l, err := eventlog.New(openAt(t, dsn), eventlog.Options{Keys: eventlogtest.FixedKeys(t), ZeroDataRetention: true})
	if err != nil {
		t.Fatal(err)
	}
	content := "CONTENT-MARKER error: permission denied reading /home/alice/.netrc"
	if _, err := l.Append(ctx, "zdr", eventlogtest.Sample(eventlog.KindToolCall, 1, content)); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var dump string
	err = conn.QueryRow(ctx, `SELECT coalesce(string_agg(t::text, E'\n'), '') FROM (
		SELECT row(e.*)::text AS t FROM eventlog_events e
		UNION ALL SELECT row(c.*)::text FROM eventlog_content c) AS x(t)`).Scan(&dump)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(dump, hex.EncodeToString([]byte("github.create_issue"))) {
		t.Fatalf("row dump lacks the envelope fields; the check proves nothing:\n%s", dump)
	}
	sum := sha256Hex(content)
	for _, needle := range []string{content, "CONTENT-MARKER", hex.EncodeToString([]byte("CONTENT-MARKER")), sum} {
		if strings.Contains(dump, needle) {
			t.Errorf("PostgreSQL rows hold content or its bare hash %q", needle)
		}
	}
}

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// TestOpenErrorHidesDSN opens a malformed DSN that holds a password: the
// error must not quote it. No server is needed, parsing fails first.
func TestOpenErrorHidesDSN(t *testing.T) {
	const secret = "hunter2-tail"
	for _, dsn := range []string{
		"host=127.0.0.1 password='x " + secret,
		"postgres://user:" + secret + "@127.0.0.1:notaport/db",
	} {
		_, err := pglog.Open(context.Background(), dsn)
		var se *eventlog.StoreError
		if !errors.As(err, &se) {
			t.Errorf("Open(malformed DSN) = %v, want a StoreError", err)
			continue
		}
		if strings.Contains(err.Error(), secret) {
			t.Errorf("Open(malformed DSN) error quotes the password: %v", err)
		}
	}
}

// TestContentDeletedBySQLDetected deletes one event's content row with
// psql's DELETE, not Log.Shred: verification names the seq, and Content
// does not pass it off as a shred. A shred through the API in the same
// log still verifies.
func TestContentDeletedBySQLDetected(t *testing.T) {
	ctx := context.Background()
	dsn := testDSN(t)
	l, err := eventlog.New(openAt(t, dsn), eventlog.Options{Keys: eventlogtest.FixedKeys(t)})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		if _, err := l.Append(ctx, "s", eventlogtest.Sample(eventlog.KindToolCall, i, "content")); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Shred(ctx, "s", 1); err != nil {
		t.Fatal(err)
	}
	if _, err := eventlog.Verify(ctx, l.Store(), "s"); err != nil {
		t.Fatalf("Verify after Shred: %v", err)
	}
	if err := execAll(dsn, []sqllogtest.Stmt{{Query: `DELETE FROM eventlog_content WHERE session = 's' AND seq = 3`}}); err != nil {
		t.Fatal(err)
	}
	_, err = eventlog.Verify(ctx, l.Store(), "s")
	var ce *eventlog.ChainError
	if !errors.As(err, &ce) || ce.Seq != 3 {
		t.Fatalf("Verify after a DELETE of seq 3's content = %v, want a ChainError at seq 3", err)
	}
	if _, err := l.Content(ctx, "s", 3); errors.Is(err, eventlog.CodeContentShredded) || !errors.As(err, &ce) {
		t.Errorf("Content(3) after a DELETE = %v, want a ChainError, not %s", err, eventlog.CodeContentShredded)
	}
	if _, err := l.Content(ctx, "s", 1); !errors.Is(err, eventlog.CodeContentShredded) {
		t.Errorf("Content(1) after Shred = %v, want %s", err, eventlog.CodeContentShredded)
	}
}

func TestPostgresWitnessStore(t *testing.T) {
	dsn := testDSN(t)
	eventlogtest.TestWitnessStore(t, func(t *testing.T) eventlog.WitnessStore { return openAt(t, dsn) })
}

// TestShredLeavesKeyInWAL pins what docs/eventlog.md says PostgreSQL
// keeps of a shredded event (finding 22): after Shred, VACUUM (FULL) and
// CHECKPOINT the table's file no longer holds the wrapped data key, but
// the WAL still does, until its segment is recycled and overwritten or
// removed. It reads the files through pg_read_binary_file, so it needs a
// superuser (as the CI server's postgres role is) and skips otherwise. If
// it fails, PostgreSQL keeps less than the docs say: update them.
func TestShredLeavesKeyInWAL(t *testing.T) {
	ctx := context.Background()
	dsn := testDSN(t)
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var super bool
	if err := conn.QueryRow(ctx, `SELECT rolsuper FROM pg_roles WHERE rolname = current_user`).Scan(&super); err != nil || !super {
		t.Skipf("reading PostgreSQL's files needs a superuser (%v)", err)
	}
	s := openAt(t, dsn)
	l, err := eventlog.New(s, eventlog.Options{Keys: eventlogtest.FixedKeys(t)})
	if err != nil {
		t.Fatal(err)
	}
	read := func(path string) []byte {
		var b []byte
		if err := conn.QueryRow(ctx, `SELECT pg_read_binary_file($1)`, path).Scan(&b); err != nil {
			t.Fatalf("read %s: %v", path, err)
		}
		return b
	}
	// A key's bytes can straddle a WAL page boundary, where PostgreSQL
	// puts a page header inside the record, and other tests' writes can
	// end the segment that held it: each attempt writes a fresh stream,
	// and one attempt that finds the key shows what the docs say.
	var segments int
	for attempt := range walAttempts {
		stream := fmt.Sprintf("wal%d", attempt)
		for i := range 3 {
			if _, err := l.Append(ctx, stream, eventlogtest.Sample(eventlog.KindToolCall, i, "CONTENT-MARKER")); err != nil {
				t.Fatal(err)
			}
		}
		recs, err := s.Read(ctx, stream, 2, 1)
		if err != nil || len(recs) != 1 {
			t.Fatalf("Read: %v %v", recs, err)
		}
		key := recs[0].DataKey[24:48] // past the nonce: bytes no other row holds
		if err := l.Shred(ctx, stream, 2); err != nil {
			t.Fatal(err)
		}
		for _, stmt := range []string{`VACUUM (FULL) eventlog_content`, `CHECKPOINT`} {
			if _, err := conn.Exec(ctx, stmt); err != nil {
				t.Fatal(err)
			}
		}
		var table string // VACUUM (FULL) wrote the table anew
		if err := conn.QueryRow(ctx, `SELECT pg_relation_filepath('eventlog_content')`).Scan(&table); err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(read(table), key) {
			t.Errorf("after VACUUM (FULL) the table file %s still holds the shredded data key", table)
		}
		rows, err := conn.Query(ctx, `SELECT name FROM pg_ls_waldir() WHERE name ~ '^[0-9A-F]{24}$' ORDER BY name`)
		if err != nil {
			t.Fatal(err)
		}
		names, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		segments = len(names)
		var in []string
		for _, seg := range names {
			if bytes.Contains(read("pg_wal/"+seg), key) {
				in = append(in, seg)
			}
		}
		if len(in) > 0 {
			t.Logf("attempt %d: the shredded data key is in WAL segments %v of %d", attempt, in, segments)
			return
		}
		t.Logf("attempt %d: no WAL segment of %d holds the shredded data key", attempt, segments)
	}
	t.Errorf("in %d attempts, no WAL segment (of %d) held the shredded data key after VACUUM (FULL) and CHECKPOINT: docs/eventlog.md says the WAL keeps it", walAttempts, segments)
}

// walAttempts bounds TestShredLeavesKeyInWAL's fresh streams.
const walAttempts = 3

// poolAndSchema returns a pool on the test server and a fresh schema name for
// OpenPool, with a DSN whose search_path is that schema (for the tamper
// harness's statements). The schema is dropped when the test ends.
func poolAndSchema(t *testing.T) (*pgxpool.Pool, string, string) {
	t.Helper()
	dsn := testDSN(t) // creates the schema, dropped at the end
	u, err := url.Parse(dsn)
	if err != nil {
		t.Skipf("the test DSN is not a URL: %v", err)
	}
	schema := u.Query().Get("search_path")
	return pgtest.NewPool(t, pgtest.DSN(t)), schema, dsn
}

// TestPostgresStoreOnSharedPool runs the conformance suite on stores
// built by OpenPool over one pool an embedder owns, in a schema of its
// choosing.
func TestPostgresStoreOnSharedPool(t *testing.T) {
	eventlogtest.TestStore(t, func(t *testing.T) eventlogtest.Harness {
		pool, schema, dsn := poolAndSchema(t)
		return sqllogtest.Harness(func(t *testing.T) eventlog.Store {
			return sqllogtest.Open(t, func(ctx context.Context) (*pglog.Store, error) { return pglog.OpenPool(ctx, pool, schema) })
		}, func(stmts []sqllogtest.Stmt) error { return execAll(dsn, stmts) })
	})
}

// TestOpenPool: the tables land in the schema named, not the pool's
// search path; Close leaves the embedder's pool open; a schema name that
// is not a plain identifier is refused.
func TestOpenPool(t *testing.T) {
	ctx := context.Background()
	pool, schema, _ := poolAndSchema(t)
	s, err := pglog.OpenPool(ctx, pool, schema)
	if err != nil {
		t.Fatal(err)
	}
	l, _ := eventlog.New(s, eventlog.Options{})
	if _, err := l.Append(ctx, "s", eventlog.Event{Kind: eventlog.KindSkip}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM `+pgx.Identifier{schema, "eventlog_events"}.Sanitize()).Scan(&n); err != nil || n != 1 {
		t.Errorf("after Close, counting the schema's events through the pool = %d, %v; want 1 (the pool stays open, the table is in the schema)", n, err)
	}
	for _, bad := range []string{"", "Public", "a-b", "1abc", `x"; DROP TABLE y; --`, strings.Repeat("a", 64)} {
		if _, err := pglog.OpenPool(ctx, pool, bad); err == nil {
			t.Errorf("OpenPool(schema %q) succeeded", bad)
		}
	}
	if _, err := pglog.OpenPool(ctx, nil, schema); err == nil {
		t.Error("OpenPool(nil pool) succeeded")
	}
}

// TestPostgresWitnessRaceForks: forks racing to a witness kept in this store, each through its
// own handle: exactly one wins each round, and the witness ends at it.
func TestPostgresWitnessRaceForks(t *testing.T) {
	dsn := testDSN(t)
	sqllogtest.RaceForks(t, func(t *testing.T) eventlog.WitnessStore { return openAt(t, dsn) })
}

func TestPostgresSessionLister(t *testing.T) {
	dsn := testDSN(t)
	eventlogtest.TestSessionLister(t, func(t *testing.T) eventlogtest.SessionListerStore { return openAt(t, dsn) })
}
