// Package sqlrecords is the custody.Store that the SQL stores (pgstore on
// PostgreSQL, sqlitestore on SQLite) share: the statements, the scanning
// of rows, and the mapping of their results to refusals and StoreErrors.
// A store adapts its driver to the small DB interface and keeps
// what is its own: how it connects, its schema, and how a transaction
// takes the write lock.
//
// Invariants:
//
//   - The table holds the key columns (namespace, integration, handle) and
//     the sealed bytes, nothing else. Get and List rebuild every Binding
//     from the key columns they read; a row whose columns do not form a
//     valid binding is a *custody.StoreError, never a refusal and never
//     a binding.
//   - Get and CompareAndSwap read at most custody.MaxSealedBytes+1 bytes
//     of a row's sealed column; a longer row is a corrupt row
//     (*custody.StoreError) to Get and never equal to an expected value.
//   - List reads at most custody.MaxListBindings+1 rows (LIMIT); a
//     namespace holding more is a *custody.StoreError.
//   - Every statement is parameterised ($1, $2, ...: PostgreSQL's form,
//     which the SQLite driver binds by number too); only the table name,
//     fixed by the store, is spliced in.
//   - Failures of the database are *custody.StoreError with the Store
//     method as Op; refusals are the *checkfu.Refusal codes of
//     custody.MemoryStore. Neither quotes sealed bytes.
//   - An invalid binding or namespace is refused before any statement
//     runs.
package sqlrecords
