package sqlitelog

// DSN is dsn, for the external tests that open a store's file beside it.
var DSN = dsn
