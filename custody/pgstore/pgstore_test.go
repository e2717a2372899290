package pgstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/checkfu/checkfu/custody"
	"github.com/checkfu/checkfu/custody/custodytest"
	"github.com/checkfu/checkfu/custody/internal/sqlrecordstest"
	"github.com/checkfu/checkfu/internal/pgtest"
	"github.com/jackc/pgx/v5/pgxpool"
)

// testPool connects to CHECKFU_TEST_POSTGRES_DSN. Without it the test is
// skipped locally, and fails under CI (CI set), where .ci/run provides a
// real PostgreSQL.
func testPool(t *testing.T) *pgxpool.Pool {
	t.Helper()
	return pgtest.Pool(t)
}

// freshStore returns a Store in a schema unique to this test run and
// subtest, dropped when the test ends.
func freshStore(t *testing.T, pool *pgxpool.Pool) (*Store, string) {
	t.Helper()
	schema := pgtest.SchemaName("custody_test_")
	pgtest.DropSchema(t, pool.Config().ConnString(), schema)
	s, err := OpenPool(context.Background(), pool, schema)
	if err != nil {
		t.Fatal(err)
	}
	return s, schema
}

func TestConformance(t *testing.T) {
	pool := testPool(t)
	custodytest.TestStore(t, func(t *testing.T) custody.Store {
		s, _ := freshStore(t, pool)
		return s
	})
}

// harness gives the shared SQL store tests a fresh store in its own
// schema and a connection beside it.
func harness(pool *pgxpool.Pool) func(t *testing.T) sqlrecordstest.Harness {
	return func(t *testing.T) sqlrecordstest.Harness {
		s, _ := freshStore(t, pool)
		return sqlrecordstest.Harness{Store: s, Table: s.table, Exec: func(query string, args ...any) error {
			_, err := pool.Exec(context.Background(), query, args...)
			return err
		}}
	}
}

// TestRawRowMove moves a row by rewriting its key columns in SQL, as an
// attacker with write access to the database would.
func TestRawRowMove(t *testing.T) { sqlrecordstest.TestRawRowMove(t, harness(testPool(t))) }

// TestCorruptRowIsStoreError: a row whose key columns do not form a valid
// binding is a failure of the store, not a refusal.
func TestCorruptRowIsStoreError(t *testing.T) { sqlrecordstest.TestCorruptRow(t, harness(testPool(t))) }

// TestOversizedRowIsStoreError: see sqlrecordstest.TestOversizedRow.
func TestOversizedRowIsStoreError(t *testing.T) {
	sqlrecordstest.TestOversizedRow(t, harness(testPool(t)))
}

// TestRowTampering: see sqlrecordstest.TestRowTampering.
func TestRowTampering(t *testing.T) { sqlrecordstest.TestRowTampering(t, harness(testPool(t))) }

// TestManyRows: see sqlrecordstest.TestManyRows.
func TestManyRows(t *testing.T) { sqlrecordstest.TestManyRows(t, harness(testPool(t))) }

// TestConcurrentCompareAndSwap: of racing swaps from one old value,
// exactly one wins.
func TestConcurrentCompareAndSwap(t *testing.T) {
	sqlrecordstest.TestConcurrentCompareAndSwap(t, harness(testPool(t)))
}

// TestRowsHoldNoPlaintext seals a canary and reads every column of every
// row back as text and as bytes, searching for every form of it.
func TestRowsHoldNoPlaintext(t *testing.T) {
	pool := testPool(t)
	ctx := context.Background()
	s, _ := freshStore(t, pool)
	canary := []byte("pg-row-canary-9a7c3e51")
	n := custody.NewNative(custody.GenerateKeyset(), s)
	b := custodytest.NewBinding("acme", "github")
	if err := n.Put(ctx, b, custody.NewSecret(bytes.Clone(canary))); err != nil {
		t.Fatal(err)
	}
	rows, err := pool.Query(ctx, `SELECT namespace, integration, handle, sealed, encode(sealed, 'escape'), row_to_json(r)::text FROM `+s.table+` r`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var all []byte
	for rows.Next() {
		var ns, integ, handle, escaped, js string
		var sealed []byte
		if err := rows.Scan(&ns, &integ, &handle, &sealed, &escaped, &js); err != nil {
			t.Fatal(err)
		}
		all = fmt.Appendf(all, "%s|%s|%s|%s|%s|%s\n", ns, integ, handle, sealed, escaped, js)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(all, []byte(b.Handle.String())) {
		t.Fatal("the handle is not in the rows read: the search looks in the wrong place")
	}
	if leaks := custodytest.FindLeaks(canary, all); leaks != nil {
		t.Fatalf("stored rows hold the canary as %v", leaks)
	}
}

func TestOpenPoolRefusesBadSchema(t *testing.T) {
	for _, bad := range []string{"", "1abc", "a-b", `x"; DROP TABLE y; --`, "Upper"} {
		var se *custody.StoreError
		if _, err := OpenPool(context.Background(), nil, bad); !errors.As(err, &se) {
			t.Errorf("OpenPool(%q) = %v, want *custody.StoreError", bad, err)
		}
	}
}

// TestOpenHidesTheDSN: a DSN that does not parse is refused without its
// text, which may hold a password. It needs no server.
func TestOpenHidesTheDSN(t *testing.T) {
	const dsn = "postgres://user:hunter2-secret@host:notaport/db"
	_, err := Open(context.Background(), dsn)
	var se *custody.StoreError
	if !errors.As(err, &se) {
		t.Fatalf("Open = %v, want *custody.StoreError", err)
	}
	if strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("Open error %q holds the DSN's password", err)
	}
}

// TestOpenOwnsThePool: Close on a Store from Open closes its pool; Close
// on a Store from OpenPool leaves the embedder's pool open.
func TestOpenOwnsThePool(t *testing.T) {
	pool := testPool(t)
	s, _ := freshStore(t, pool)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := pool.Ping(context.Background()); err != nil {
		t.Fatalf("Close of an OpenPool Store closed the embedder's pool: %v", err)
	}
	pgtest.DropSchema(t, pool.Config().ConnString(), DefaultSchema)
	owned, err := Open(context.Background(), pool.Config().ConnString())
	if err != nil {
		t.Fatal(err)
	}
	if err := owned.Close(); err != nil {
		t.Fatal(err)
	}
	if err := owned.pool.Ping(context.Background()); err == nil {
		t.Fatal("Close of an Open Store left its pool open")
	}
}
