package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// EnvDSN is the environment variable that holds the server's DSN.
const EnvDSN = "CHECKFU_TEST_POSTGRES_DSN"

// LookupDSN returns the DSN in EnvDSN and true. When EnvDSN is empty it
// returns "", false, except under CI, where it fails t.
func LookupDSN(t testing.TB) (string, bool) {
	t.Helper()
	dsn := os.Getenv(EnvDSN)
	if dsn == "" && os.Getenv("CI") != "" {
		t.Fatal("CI is set but " + EnvDSN + " is empty: .ci/setup.d/10-postgres.sh must start PostgreSQL")
	}
	return dsn, dsn != ""
}

// DSN returns the DSN in EnvDSN. When EnvDSN is empty it skips t, except
// under CI, where it fails t.
func DSN(t testing.TB) string {
	t.Helper()
	dsn, ok := LookupDSN(t)
	if !ok {
		t.Skip(EnvDSN + " is empty; set it to run the PostgreSQL tests")
	}
	return dsn
}

// Pool returns a pool on DSN(t), closed when the test ends.
func Pool(t testing.TB) *pgxpool.Pool {
	t.Helper()
	return NewPool(t, DSN(t))
}

// NewPool returns a pool on dsn, closed when the test ends.
func NewPool(t testing.TB, dsn string) *pgxpool.Pool {
	t.Helper()
	pool, err := pgxpool.New(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// Conn returns a connection to dsn, closed when the test ends.
func Conn(t testing.TB, dsn string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// SchemaName returns prefix followed by 12 random hex digits: a schema
// name no other test process or call picks. prefix should be lower case
// and end in "_".
func SchemaName(prefix string) string {
	var b [6]byte
	rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// DropSchema drops schema, with everything in it, from the database at
// dsn when the test ends. The schema need not exist yet.
func DropSchema(t testing.TB, dsn, schema string) {
	t.Helper()
	t.Cleanup(func() {
		ctx := context.Background()
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Errorf("pgtest: dropping schema %s: %v", schema, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE"); err != nil {
			t.Errorf("pgtest: dropping schema %s: %v", schema, err)
		}
	})
}

// SchemaDSN creates a fresh schema named by SchemaName(prefix), dropped
// when the test ends, and returns DSN(t) with search_path set to it: a
// store opened with it creates its tables there. A postgres:// URL stays a
// URL; a key=value DSN gets a search_path pair.
func SchemaDSN(t testing.TB, prefix string) string {
	t.Helper()
	base := DSN(t)
	schema := SchemaName(prefix)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	_, err = conn.Exec(ctx, "CREATE SCHEMA "+pgx.Identifier{schema}.Sanitize())
	conn.Close(ctx)
	if err != nil {
		t.Fatal(err)
	}
	DropSchema(t, base, schema)
	if u, err := url.Parse(base); err == nil && (u.Scheme == "postgres" || u.Scheme == "postgresql") {
		q := u.Query()
		q.Set("search_path", schema)
		u.RawQuery = q.Encode()
		return u.String()
	}
	return strings.TrimSpace(base) + " search_path=" + schema
}
