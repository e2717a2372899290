package eventlog

import (
	"fmt"

	"github.com/checkfu/checkfu"
)

// Codes of the refusals this package returns. Callers branch on them with
// errors.Is.
const (
	// CodeInvalidEvent refuses an event that does not validate or decode.
	CodeInvalidEvent checkfu.Code = "invalid_event"
	// CodeInvalidSession refuses a session id that is not an identifier.
	CodeInvalidSession checkfu.Code = "invalid_session"
	// CodeSeqConflict refuses an append whose expected last seq is not the
	// session's last seq: another writer got there first. Nothing was
	// written; re-read the head and try again.
	CodeSeqConflict checkfu.Code = "seq_conflict"
	// CodeChainBroken is the code of a [*ChainError]: verification found an
	// event changed, removed, reordered or inserted.
	CodeChainBroken checkfu.Code = "chain_broken"
	// CodeContentKeyMissing refuses an event with content appended to a log
	// that has no [Keys] to seal or digest it.
	CodeContentKeyMissing checkfu.Code = "content_key_missing"
	// CodeContentShredded refuses to return content whose data key and
	// ciphertext were deleted.
	CodeContentShredded checkfu.Code = "content_shredded"
	// CodeContentNotRetained refuses to return content of an event appended
	// to a zero-data-retention log: only its keyed digest was kept.
	CodeContentNotRetained checkfu.Code = "content_not_retained"
	// CodeNoContent refuses to return content of an event that had none.
	CodeNoContent checkfu.Code = "no_content"
	// CodeEventNotFound refuses a read of a seq the session does not hold.
	CodeEventNotFound checkfu.Code = "event_not_found"
	// CodeNoStore refuses every use of a Log that has no Store (the zero
	// Log, a nil *Log) and New without one.
	CodeNoStore checkfu.Code = "no_store"
	// CodeSignerMissing refuses to sign a checkpoint without a signer
	// (Options.Signer).
	CodeSignerMissing checkfu.Code = "signer_missing"
	// CodeCheckpointInvalid refuses a checkpoint that does not open: a
	// malformed note or body, no signature by a known key, a key that
	// does not sign the origin's log, or a verifier key that is not a
	// strict Ed25519 key.
	CodeCheckpointInvalid checkfu.Code = "checkpoint_invalid"
	// CodeCheckpointRollback refuses a checkpoint smaller than one
	// already witnessed, or of the same size with another head: the log
	// was truncated, rolled back or forked.
	CodeCheckpointRollback checkfu.Code = "checkpoint_rollback"
	// CodeCheckpointConflict is the code of a [*CheckpointConflict]: the
	// caller's idea of what a witness holds is stale.
	CodeCheckpointConflict checkfu.Code = "checkpoint_conflict"
	// CodeCheckpointInconsistent refuses a checkpoint whose proof does not
	// lead from the witnessed head to its own: the log was rewritten.
	CodeCheckpointInconsistent checkfu.Code = "checkpoint_inconsistent"
)

// errNoStore is the refusal of a Log without a Store.
var errNoStore = checkfu.Refuse(CodeNoStore, "eventlog: the Log has no Store; build it with New(store, opts) over NewMemoryStore, sqlitelog or pglog")

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
	return fmt.Sprintf("eventlog: session %q: chain broken at seq %d: %s", e.Session, e.Seq, e.Problem)
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
