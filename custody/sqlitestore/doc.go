// Package sqlitestore is the embedded default custody.Store: sealed records
// in one SQLite file, through modernc.org/sqlite (pure Go, no cgo).
//
// Invariants:
//
//   - The table holds the key columns (namespace, integration, handle) and
//     the sealed bytes, nothing else: no plaintext and no copy of the
//     address beside the ciphertext. Get rebuilds the Binding from the key
//     columns it read, and that is the address the record must open at.
//   - Key columns compare as bytes (BINARY collation), so "GitHub" and
//     "github" are different addresses, as in every other Store.
//   - The database runs in WAL mode with a busy timeout; writes go through
//     one connection and begin IMMEDIATE transactions, so concurrent
//     writers queue instead of failing with SQLITE_BUSY.
//   - Failures of SQLite are *custody.StoreError; refusals are the same
//     *checkfu.Refusal codes as custody.MemoryStore.
package sqlitestore
