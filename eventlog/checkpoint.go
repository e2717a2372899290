package eventlog

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/note"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/signing"
)

// A checkpoint commits to the head of one session's log: it is a C2SP
// tlog-checkpoint (https://c2sp.org/tlog-checkpoint) body, signed as a
// C2SP signed note (https://c2sp.org/signed-note) with Ed25519 through
// golang.org/x/mod/sumdb/note:
//
//	<origin>
//	<size>
//	<head hash, base64>
//
//	— <key name> <base64(key hash || signature)>
//
// The origin is the signing key's name, "/", and the session id. The size
// is the seq of the head and the hash is its chain hash, not a Merkle
// root: the log is a hash chain, so the proof that a later checkpoint
// extends an earlier one is the envelopes between them (see [Witness]).
// A checkpoint has no extension lines and a size of at least 1.

// A Checkpoint is the parsed body of a checkpoint.
type Checkpoint struct {
	// Origin is the key name, "/", and Session.
	Origin  string
	Session string
	Head    Head
}

// checkpointText returns the note text of a checkpoint of session's head
// under the key called name.
func checkpointText(name, session string, head Head) string {
	return fmt.Sprintf("%s/%s\n%d\n%s\n", name, session, head.Seq, base64.StdEncoding.EncodeToString(head.Hash[:]))
}

// SignCheckpoint returns the checkpoint of session at head, signed by
// signer. It does not read or verify the log: [Log.Checkpoint] signs
// only a head it has verified.
func SignCheckpoint(signer note.Signer, session string, head Head) ([]byte, error) {
	if signer == nil {
		return nil, checkfu.Refuse(CodeCheckpointSignerMissing, "eventlog: no checkpoint signer (configure Options.Signer)")
	}
	if err := CheckSession(session); err != nil {
		return nil, err
	}
	if head.Seq == 0 {
		return nil, checkfu.Refuse(CodeEventNotFound, "eventlog: session %s is empty: there is no head to sign", checkfu.Quote(session))
	}
	msg, err := note.Sign(&note.Note{Text: checkpointText(signer.Name(), session, head)}, signer)
	if err != nil {
		return nil, checkfu.Refuse(CodeCheckpointSignerMissing, "eventlog: sign checkpoint: %v", err)
	}
	return msg, nil
}

// OpenCheckpoint checks the signature of a checkpoint against verifiers
// and parses its body strictly. At least one signature must verify, by a
// key whose name, followed by "/", begins the origin: a key signs
// checkpoints only of its own logs. Every key that signed it and whose
// name begins the origin must split the origin into the same session. A
// verifier counts only when [NewCheckpointVerifier] built it: one from
// note.NewVerifier may hold a small-order key, for which one signature
// verifies every message. It returns the note (with the signatures that
// verified) and the parsed checkpoint; every failure is a refusal with
// [CodeCheckpointInvalid].
func OpenCheckpoint(msg []byte, verifiers note.Verifiers) (*note.Note, Checkpoint, error) {
	n, cp, _, err := openCheckpoint(msg, verifiers)
	return n, cp, err
}

// openCheckpoint is [OpenCheckpoint] that also returns the signatures by
// the keys that sign the origin's log.
func openCheckpoint(msg []byte, verifiers note.Verifiers) (*note.Note, Checkpoint, []note.Signature, error) {
	bad := func(format string, args ...any) (*note.Note, Checkpoint, []note.Signature, error) {
		return nil, Checkpoint{}, nil, checkfu.Refuse(CodeCheckpointInvalid, "eventlog: checkpoint: "+format, args...)
	}
	if len(msg) > maxCheckpoint {
		return bad("%d bytes, more than the %d allowed", len(msg), maxCheckpoint)
	}
	if verifiers == nil {
		return bad("no signature by a known key")
	}
	n, err := note.Open(msg, admittedVerifiers{verifiers})
	if err != nil {
		var unverified *note.UnverifiedNoteError
		var unadmitted *unadmittedError
		switch {
		case errors.As(err, &unverified):
			return bad("no signature by a known key")
		case errors.As(err, &unadmitted):
			return bad("the verifier of key %s was not built by NewCheckpointVerifier", checkfu.Quote(unadmitted.name))
		}
		// note's errors name keys from the note: quote them.
		return bad("the note does not open: %s", checkfu.Quote(err.Error()))
	}
	cp, err := parseCheckpoint(n.Text)
	if err != nil {
		return nil, Checkpoint{}, nil, err
	}
	var signers []note.Signature
	for _, sig := range n.Sigs {
		session, ok := strings.CutPrefix(cp.Origin, sig.Name+"/")
		if !ok {
			continue
		}
		if err := CheckSession(session); err != nil {
			return bad("origin names no session")
		}
		if len(signers) > 0 && session != cp.Session {
			return bad("origin %s names session %s for one signing key and %s for another", checkfu.Quote(cp.Origin), checkfu.Quote(cp.Session), checkfu.Quote(session))
		}
		cp.Session = session
		signers = append(signers, sig)
	}
	if len(signers) == 0 {
		return bad("origin %s is not a log of the key that signed it", checkfu.Quote(cp.Origin))
	}
	return n, cp, signers, nil
}

// admittedVerifiers passes on only the verifiers [NewCheckpointVerifier]
// built.
type admittedVerifiers struct{ note.Verifiers }

func (a admittedVerifiers) Verifier(name string, hash uint32) (note.Verifier, error) {
	v, err := a.Verifiers.Verifier(name, hash)
	if err != nil {
		return nil, err
	}
	if _, ok := v.(strictVerifier); !ok {
		return nil, &unadmittedError{name}
	}
	return v, nil
}

// unadmittedError is the error admittedVerifiers gives note.Open for a
// verifier NewCheckpointVerifier did not build.
type unadmittedError struct{ name string }

func (e *unadmittedError) Error() string { return "verifier not admitted" }

// maxCheckpoint bounds a checkpoint note: three short lines and a few
// signatures.
const maxCheckpoint = 16 << 10

// parseCheckpoint parses the three lines of a checkpoint body: no
// extension lines, a decimal size from 1 without leading zeros, and a
// canonical base64 hash of 32 bytes.
func parseCheckpoint(text string) (Checkpoint, error) {
	bad := func(what string) (Checkpoint, error) {
		return Checkpoint{}, checkfu.Refuse(CodeCheckpointInvalid, "eventlog: checkpoint: %s", what)
	}
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if len(lines) != 3 {
		return bad(fmt.Sprintf("%d lines, want origin, size and hash", len(lines)))
	}
	origin, sizeText, hashText := lines[0], lines[1], lines[2]
	if origin == "" {
		return bad("empty origin")
	}
	size, err := strconv.ParseUint(sizeText, 10, 64)
	if err != nil || size == 0 || strconv.FormatUint(size, 10) != sizeText {
		return bad("size is not a decimal number from 1")
	}
	raw, err := base64.StdEncoding.Strict().DecodeString(hashText)
	if err != nil || len(raw) != len(Hash{}) {
		return bad("hash is not 32 bytes of base64")
	}
	return Checkpoint{Origin: origin, Head: Head{Seq: size, Hash: HashFromBytes(raw)}}, nil
}

// VerifyCheckpoint verifies session like [VerifyHead] against the head
// a checkpoint records, after checking the checkpoint's signature with
// [OpenCheckpoint] and that it is a checkpoint of session. A log shorter
// than the checkpoint (truncated), or whose event at the checkpoint's
// size has another hash (rewritten or rolled back), is a [*ChainError].
func VerifyCheckpoint(ctx context.Context, store Store, session string, checkpoint []byte, verifiers note.Verifiers) (Head, error) {
	_, cp, err := OpenCheckpoint(checkpoint, verifiers)
	if err != nil {
		return Head{}, err
	}
	if cp.Session != session {
		return Head{}, checkfu.Refuse(CodeCheckpointInvalid, "eventlog: the checkpoint is of session %s, not %s", checkfu.Quote(cp.Session), checkfu.Quote(session))
	}
	return VerifyHead(ctx, store, session, cp.Head)
}

// Checkpoint verifies session from seq 1 and returns a checkpoint of its
// head signed with Options.Signer. When Options.Witness is set, the
// checkpoint is first submitted to it, with the envelopes that prove it
// extends the last checkpoint the witness saw, and Checkpoint returns the
// note with the witness's signature added; a witness that refuses (the
// log was rolled back or forked since) fails the call.
//
// Call it on demand, and when a session ends: a checkpoint kept
// elsewhere, or held by a witness, is what makes truncation and rollback
// of the log visible.
func (l *Log) Checkpoint(ctx context.Context, session string) ([]byte, error) {
	if err := l.usable(); err != nil {
		return nil, err
	}
	if l.signer == nil {
		return nil, checkfu.Refuse(CodeCheckpointSignerMissing, "eventlog: the log has no checkpoint signer (configure Options.Signer)")
	}
	head, err := l.Verify(ctx, session)
	if err != nil {
		return nil, err
	}
	msg, err := SignCheckpoint(l.signer, session, head)
	if err != nil || l.witness == nil {
		return msg, err
	}
	return submit(ctx, l.witness, l.store, session, head.Seq, msg)
}

// submit hands msg, a checkpoint of session at size, to w: first as if w
// had seen nothing, then, when w answers with the size it has seen, with
// the envelopes after that size.
func submit(ctx context.Context, w Witness, store Store, session string, size uint64, msg []byte) ([]byte, error) {
	cosigned, err := w.AddCheckpoint(ctx, 0, nil, msg)
	var conflict *CheckpointConflict
	if !errors.As(err, &conflict) {
		return cosigned, err
	}
	if conflict.Size > size {
		return nil, checkfu.Refuse(CodeCheckpointRollback, "eventlog: session %s: the witness has seen seq %d, but the log ends at seq %d (the log was truncated or rolled back)", checkfu.Quote(session), conflict.Size, size)
	}
	proof, err := Proof(ctx, store, session, conflict.Size, size)
	if err != nil {
		return nil, err
	}
	return w.AddCheckpoint(ctx, conflict.Size, proof, msg)
}

// Proof returns the envelopes of session's events from seq old+1 through
// size, in order: what a [Witness] needs to check that a checkpoint at
// size extends one at old. It does not verify them; the witness does.
func Proof(ctx context.Context, store Store, session string, old, size uint64) ([][]byte, error) {
	if store == nil {
		return nil, errStoreMissing
	}
	if old > size {
		return nil, checkfu.Refuse(CodeCheckpointRollback, "eventlog: no proof from seq %d back to seq %d", old, size)
	}
	out := make([][]byte, 0, min(size-old, readBatch))
	for next := old + 1; next <= size; {
		recs, err := store.Read(ctx, session, next, int(min(readBatch, size-next+1)))
		if err != nil {
			return nil, err
		}
		if len(recs) == 0 {
			return nil, &ChainError{Session: session, Seq: next, Problem: "missing (the log ends before the checkpoint)"}
		}
		for _, r := range recs {
			out = append(out, r.Envelope)
		}
		next += uint64(len(recs))
	}
	return out, nil
}

// NewCheckpointVerifier parses a note verifier key
// ("name+hash+base64(0x01 || Ed25519 public key)", as note.GenerateKey
// writes it) and admits its public key strictly with
// [signing.ParsePublicKey]: a canonical encoding of a point of the
// prime-order subgroup, not of small order. crypto/ed25519 accepts
// small-order keys, for which one fixed signature verifies every message.
// The verifier it returns verifies with [signing.PublicKey.Verify], which
// also refuses signatures whose R is of small order.
func NewCheckpointVerifier(vkey string) (note.Verifier, error) {
	v, err := note.NewVerifier(vkey)
	if err != nil {
		return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "eventlog: verifier key does not parse (want name+hash+key, as note.GenerateKey writes it)")
	}
	// A key name holds no '+', and the key hash is hex: the key is what
	// follows the second '+'.
	_, rest, _ := strings.Cut(vkey, "+")
	_, b64, _ := strings.Cut(rest, "+")
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil || len(raw) != 1+ed25519.PublicKeySize || raw[0] != 1 {
		return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "eventlog: verifier key is not an Ed25519 key")
	}
	key, err := signing.ParsePublicKey(raw[1:])
	if err != nil {
		return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "eventlog: verifier key %s is not a canonical Ed25519 key of prime order", checkfu.Quote(v.Name()))
	}
	return strictVerifier{Verifier: v, key: key}, nil
}

// strictVerifier takes its name and key hash from the note verifier and
// verifies with package signing's strict rules, which also refuse
// signatures whose R is of small order.
type strictVerifier struct {
	note.Verifier
	key *signing.PublicKey
}

func (v strictVerifier) Verify(msg, sig []byte) bool { return v.key.Verify(msg, sig) }
