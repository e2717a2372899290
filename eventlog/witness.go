package eventlog

import (
	"context"
	"errors"
	"fmt"

	"golang.org/x/mod/sumdb/note"

	"github.com/checkfu/checkfu"
)

// A Witness keeps, for every log origin, the latest checkpoint it has
// accepted, and accepts a new one only if it extends that one. It is
// modelled on C2SP tlog-witness (https://c2sp.org/tlog-witness): the
// caller names the size it believes the witness holds and proves that the
// new checkpoint extends it. The proof of a hash chain is its envelopes:
// the records from old+1 through the new size, each linking to the one
// before, the first to the witnessed head and the last hashing to the
// new head.
type Witness interface {
	// AddCheckpoint verifies checkpoint (a signed note from a known log
	// key) and proof against the latest checkpoint the witness holds for
	// its origin, and, if it extends it, records it atomically and
	// durably as the latest. old is the size of that latest checkpoint
	// (0 when the caller believes there is none). It returns the
	// checkpoint, with the witness's signature added when the witness
	// signs.
	//
	// It refuses with a [*CheckpointConflict] (code
	// [CodeCheckpointConflict]) carrying the witness's size when old is
	// not it; with [CodeCheckpointRollback] a checkpoint smaller than
	// old, or of old's size with another hash; with
	// [CodeCheckpointInconsistent] a proof that does not lead from the
	// witnessed head to the new one; with [CodeCheckpointInvalid] a
	// checkpoint that does not open.
	AddCheckpoint(ctx context.Context, old uint64, proof [][]byte, checkpoint []byte) ([]byte, error)
}

// A WitnessState is what a witness holds for one origin: the size and
// head hash of the latest checkpoint it accepted, and that checkpoint.
// The zero WitnessState means it has seen none.
type WitnessState struct {
	Size       uint64
	Hash       Hash
	Checkpoint []byte
}

// A WitnessStore keeps the state of a [StoreWitness] durably. The three
// log stores implement it ([MemoryStore], sqlitelog and pglog), each in
// its own table, so a witness can run on any of them. Implementations must
// be safe for concurrent use.
type WitnessStore interface {
	// Witnessed returns the state held for origin; the zero state when
	// there is none.
	Witnessed(ctx context.Context, origin string) (WitnessState, error)
	// Witness replaces the state of origin with next if and only if it
	// is prev (compared by size and hash; the zero prev means no state),
	// atomically and durably. When it is not, it returns a refusal with
	// [CodeCheckpointConflict] and changes nothing.
	Witness(ctx context.Context, origin string, prev, next WitnessState) error
}

// A CheckpointConflict is the refusal of a checkpoint submitted with an
// old size that is not the size the witness holds. Resubmit with Size and
// a proof from it.
type CheckpointConflict struct {
	Origin string
	// Size is the size of the latest checkpoint the witness holds for
	// Origin, 0 for none.
	Size uint64
}

// Error returns "eventlog: witness: ORIGIN is at size N".
func (e *CheckpointConflict) Error() string {
	return fmt.Sprintf("eventlog: witness: %s is at size %d; resubmit with that size and a proof from it", checkfu.Quote(e.Origin), e.Size)
}

// Is reports whether target is [CodeCheckpointConflict].
func (e *CheckpointConflict) Is(target error) bool { return target == CodeCheckpointConflict }

// A StoreWitness is the reference [Witness]: it verifies checkpoints
// signed by the log keys it knows and keeps its state in a
// [WitnessStore].
type StoreWitness struct {
	store  WitnessStore
	logs   note.Verifiers
	signer note.Signer
}

var _ Witness = (*StoreWitness)(nil)

// NewWitness returns a witness that accepts checkpoints signed by one of
// logs and keeps its state in store. When signer is not nil, every
// accepted checkpoint is returned with the witness's own signature added
// (an Ed25519 note signature; not a C2SP tlog-cosignature, which also
// signs a timestamp).
func NewWitness(store WitnessStore, logs note.Verifiers, signer note.Signer) (*StoreWitness, error) {
	if store == nil {
		return nil, errStoreMissing
	}
	if logs == nil {
		return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "eventlog: a witness needs the verifier keys of the logs it witnesses")
	}
	return &StoreWitness{store: store, logs: logs, signer: signer}, nil
}

// AddCheckpoint implements [Witness.AddCheckpoint]. A first checkpoint of
// an origin (old 0, no state) is accepted on its signature alone, or with
// a proof from seq 1 when one is given, as tlog-witness accepts a first
// checkpoint without a consistency proof.
func (w *StoreWitness) AddCheckpoint(ctx context.Context, old uint64, proof [][]byte, checkpoint []byte) ([]byte, error) {
	n, cp, signers, err := openCheckpoint(checkpoint, w.logs)
	if err != nil {
		return nil, err
	}
	seen, err := w.store.Witnessed(ctx, cp.Origin)
	if err != nil {
		return nil, err
	}
	if old != seen.Size {
		return nil, &CheckpointConflict{Origin: cp.Origin, Size: seen.Size}
	}
	if err := w.sameKey(cp, signers, seen); err != nil {
		return nil, err
	}
	if err := extends(cp, seen, proof); err != nil {
		return nil, err
	}
	out := checkpoint
	if w.signer != nil {
		if out, err = note.Sign(n, w.signer); err != nil {
			return nil, fmt.Errorf("eventlog: witness: cosign: %w", err)
		}
	}
	if cp.Head.Seq == seen.Size {
		return out, nil // the checkpoint the witness holds, again
	}
	next := WitnessState{Size: cp.Head.Seq, Hash: cp.Head.Hash, Checkpoint: checkpoint}
	if err := w.store.Witness(ctx, cp.Origin, seen, next); err != nil {
		if errors.Is(err, CodeCheckpointConflict) {
			now, rerr := w.store.Witnessed(ctx, cp.Origin)
			if rerr != nil {
				return nil, rerr
			}
			return nil, &CheckpointConflict{Origin: cp.Origin, Size: now.Size}
		}
		return nil, err
	}
	return out, nil
}

// sameKey checks that a checkpoint cp, signed by signers, is signed by a
// key that signed the checkpoint the witness holds for its origin: two
// log keys of one name, or key "a" with session "b/c" and key "a/b" with
// session "c", share an origin, and only the log that was witnessed
// first may move it. The held checkpoint must still open and match the
// size and hash it is held under.
func (w *StoreWitness) sameKey(cp Checkpoint, signers []note.Signature, seen WitnessState) error {
	if seen.Size == 0 {
		return nil
	}
	_, held, heldBy, err := openCheckpoint(seen.Checkpoint, w.logs)
	if err != nil || held.Origin != cp.Origin || held.Head != (Head{Seq: seen.Size, Hash: seen.Hash}) {
		return checkfu.Refuse(CodeCheckpointInvalid, "eventlog: witness: the checkpoint held for %s does not open under the log keys, or is not the state it is held as (the witness's state was changed, or the log's key removed)", checkfu.Quote(cp.Origin))
	}
	for _, a := range signers {
		for _, b := range heldBy {
			if a.Name == b.Name && a.Hash == b.Hash {
				return nil
			}
		}
	}
	return checkfu.Refuse(CodeCheckpointInvalid, "eventlog: witness: %s: the checkpoint is signed by none of the keys that signed the one witnessed (another log's key shares the origin)", checkfu.Quote(cp.Origin))
}

// extends checks that cp extends seen, with proof the envelopes of the
// seqs between them.
func extends(cp Checkpoint, seen WitnessState, proof [][]byte) error {
	switch {
	case cp.Head.Seq < seen.Size:
		return checkfu.Refuse(CodeCheckpointRollback, "eventlog: witness: %s: a checkpoint at size %d, but size %d was witnessed (the log was truncated or rolled back)", checkfu.Quote(cp.Origin), cp.Head.Seq, seen.Size)
	case cp.Head.Seq == seen.Size && cp.Head.Hash != seen.Hash:
		return checkfu.Refuse(CodeCheckpointRollback, "eventlog: witness: %s: a checkpoint at size %d with another head than the one witnessed (the log was forked or rewritten)", checkfu.Quote(cp.Origin), seen.Size)
	case seen.Size == 0 && len(proof) == 0:
		return nil
	}
	inconsistent := func(format string, args ...any) error {
		return checkfu.Refuse(CodeCheckpointInconsistent, "eventlog: witness: %s: "+format, append([]any{checkfu.Quote(cp.Origin)}, args...)...)
	}
	if uint64(len(proof)) != cp.Head.Seq-seen.Size {
		return inconsistent("the proof holds %d envelopes, want %d (seqs %d to %d)", len(proof), cp.Head.Seq-seen.Size, seen.Size+1, cp.Head.Seq)
	}
	prev := seen.Hash
	for i, enc := range proof {
		seq := seen.Size + uint64(i) + 1
		env, err := decodeEnvelope(enc)
		if err != nil {
			return inconsistent("the envelope of seq %d does not decode", seq)
		}
		if env.session != cp.Session || env.seq != seq {
			return inconsistent("the envelope for seq %d is seq %d of another session or place", seq, env.seq)
		}
		if env.prev != prev {
			return inconsistent("seq %d does not link to the witnessed head (the log was rewritten before it)", seq)
		}
		prev = chainHash(enc)
	}
	if prev != cp.Head.Hash {
		return inconsistent("the proof does not lead to the checkpoint's head")
	}
	return nil
}

// WitnessConflict returns the refusal a [WitnessStore] gives a state
// change whose prev is not the state it holds.
func WitnessConflict(origin string) error {
	return checkfu.Refuse(CodeCheckpointConflict, "eventlog: witness: the state of %s changed (another witness call got there first)", checkfu.Quote(origin))
}
