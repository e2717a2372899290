// Package pgtest gives tests the PostgreSQL server that CI provides.
//
// The server is named by the environment variable CHECKFU_TEST_POSTGRES_DSN
// (.ci/setup.d/10-postgres.sh starts one and exports it). Without it a
// test is skipped locally, but fails under CI (CI set): there the
// PostgreSQL tests must run, never silently vanish.
//
// Every schema it creates has a name unique to the test process and the
// call, and is dropped when the test ends, so tests of different packages
// share one server without colliding.
package pgtest
