package eventlog

import "github.com/checkfu/checkfu"

// Codes of the refusals this package returns; callers branch on them with
// errors.Is. Key material of the wrong size, and Keys not built with
// NewKeys, are refused with the shared [checkfu.CodeConfigInvalid].
const (
	// CodeEventInvalid refuses an event that does not validate or decode.
	CodeEventInvalid checkfu.Code = "event_invalid"
	// CodeSessionInvalid refuses a session id that is not an identifier.
	CodeSessionInvalid checkfu.Code = "session_invalid"
	// CodeSeqConflict refuses an append whose expected last seq is not the
	// session's last seq: another writer got there first. Nothing was
	// written; re-read the head and try again.
	CodeSeqConflict checkfu.Code = "seq_conflict"
	// CodeChainBroken is the code of a [*ChainError]: verification found an
	// event changed, removed, reordered or inserted, or content deleted
	// without a shred event.
	CodeChainBroken checkfu.Code = "chain_broken"
	// CodeContentKeyMissing refuses an event with content appended to a log
	// that has no [Keys] to seal or digest it.
	CodeContentKeyMissing checkfu.Code = "content_key_missing"
	// CodeContentShredded refuses to return content whose data key and
	// ciphertext were deleted by [Log.Shred].
	CodeContentShredded checkfu.Code = "content_shredded"
	// CodeContentNotRetained refuses to return content of an event appended
	// to a zero-data-retention log: only its keyed digest was kept.
	CodeContentNotRetained checkfu.Code = "content_not_retained"
	// CodeContentMissing refuses to return, or a store to shred, content
	// of an event that has none.
	CodeContentMissing checkfu.Code = "content_missing"
	// CodeEventNotFound refuses a read of a seq the session does not hold.
	CodeEventNotFound checkfu.Code = "event_not_found"
	// CodeStoreMissing refuses every use of a Log that has no Store (the
	// zero Log, a nil *Log) and New without one.
	CodeStoreMissing checkfu.Code = "store_missing"
	// CodeCheckpointSignerMissing refuses to sign a checkpoint without a
	// signer (Options.Signer).
	CodeCheckpointSignerMissing checkfu.Code = "checkpoint_signer_missing"
	// CodeCheckpointInvalid refuses a checkpoint that does not open: a
	// malformed note or body, no signature by a known key, or a key that
	// does not sign the origin's log.
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
