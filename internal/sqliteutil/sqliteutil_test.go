package sqliteutil

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"
)

const testSchema = `CREATE TABLE IF NOT EXISTS t (k TEXT PRIMARY KEY);`

// open returns a database on path whose busy timeout is zero, so that a
// held lock makes SQLite answer SQLITE_BUSY at once.
func open(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(0)&_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// holdWriteLock takes the write lock on path from a separate connection
// and returns a func that releases it.
func holdWriteLock(t *testing.T, path string) (release func()) {
	t.Helper()
	db := open(t, path)
	tx, err := db.Begin() // BEGIN IMMEDIATE
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(`CREATE TABLE IF NOT EXISTS lockholder (x)`); err != nil {
		t.Fatal(err)
	}
	return func() { tx.Rollback() }
}

func TestCreateSchemaWaitsOutABusyFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	release := holdWriteLock(t, path)
	released := make(chan struct{})
	time.AfterFunc(50*time.Millisecond, func() { release(); close(released) })

	if err := CreateSchema(context.Background(), open(t, path), testSchema, 10*time.Second); err != nil {
		t.Fatalf("CreateSchema while another connection held the lock for 50ms: %v", err)
	}
	<-released
}

func TestCreateSchemaGivesUpAfterTimeout(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	release := holdWriteLock(t, path)
	defer release()
	err := CreateSchema(context.Background(), open(t, path), testSchema, 20*time.Millisecond)
	if err == nil || !IsBusy(err) {
		t.Fatalf("CreateSchema against a lock held throughout: %v, want SQLITE_BUSY", err)
	}
}

func TestCreateSchemaReturnsOtherErrorsAtOnce(t *testing.T) {
	db := open(t, filepath.Join(t.TempDir(), "db"))
	err := CreateSchema(context.Background(), db, "CREATE TABLE (", time.Minute)
	if err == nil || IsBusy(err) {
		t.Fatalf("CreateSchema with a syntax error: %v, want it as is", err)
	}
}
