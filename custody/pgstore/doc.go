// Package pgstore is the custody.Store for multi-host deployments: sealed
// records in PostgreSQL, through pgx v5.
//
// Invariants:
//
//   - The table holds the key columns (namespace, integration, handle) and
//     the sealed bytes, nothing else: no plaintext and no copy of the
//     address beside the ciphertext. Get rebuilds the Binding from the key
//     columns it read, and that is the address the record must open at.
//   - Key columns use the "C" collation, so they compare and sort as bytes,
//     exactly like custody.MemoryStore and the SQLite store.
//   - All statements are parameterised; the schema name is validated and
//     quoted as an identifier.
//   - Failures of PostgreSQL are *custody.StoreError; refusals are the same
//     *checkfu.Refusal codes as custody.MemoryStore.
package pgstore
