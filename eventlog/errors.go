package eventlog

import (
	"fmt"

	"github.com/checkfu/checkfu"
)

// errStoreMissing is the refusal of a Log without a Store.
var errStoreMissing = checkfu.Refuse(CodeStoreMissing, "eventlog: the Log has no Store; build it with New(store, opts) over NewMemoryStore, sqlitelog or pglog")

// A ChainError reports the first seq at which a session's records stop
// verifying. It wraps a [*checkfu.Refusal] with code [CodeChainBroken],
// so errors.Is(err, CodeChainBroken), errors.As with a *checkfu.Refusal
// and checkfu.CodeOf all find it.
type ChainError struct {
	Session string
	// Seq is the first seq found bad: the changed, missing, misplaced or
	// unlinked event.
	Seq uint64
	// Problem says what was wrong, in lower case.
	Problem string
}

// Error returns "eventlog: session S: chain broken at seq N: PROBLEM".
func (e *ChainError) Error() string {
	return fmt.Sprintf("eventlog: session %s: chain broken at seq %d: %s", checkfu.Quote(e.Session), e.Seq, e.Problem)
}

// Unwrap returns the refusal the error is: code [CodeChainBroken], with
// the error's own text as its message.
func (e *ChainError) Unwrap() error {
	return &checkfu.Refusal{Code: CodeChainBroken, Message: e.Error()}
}

// A StoreError is a failure of the backing store (an I/O error, a lost
// connection), as opposed to a refusal. Whether the operation took effect
// is unknown when Op is an append: re-read the head before retrying.
type StoreError struct {
	Op  string // "append", "read", "head", "shred", "open", ...
	Err error
}

// Error returns "eventlog: store OP: ERR".
func (e *StoreError) Error() string { return "eventlog: store " + e.Op + ": " + e.Err.Error() }

// Unwrap returns the underlying error.
func (e *StoreError) Unwrap() error { return e.Err }
