package eventlog_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"

	"golang.org/x/mod/sumdb/note"

	"github.com/checkfu/checkfu/eventlog"
	"github.com/checkfu/checkfu/eventlog/eventlogtest"
)

// namedKey returns a fixed note signer called name and its admitted
// verifier.
func namedKey(t *testing.T, name string, seed byte) (note.Signer, note.Verifier) {
	t.Helper()
	skey, vkey, err := note.GenerateKey(bytes.NewReader(bytes.Repeat([]byte{seed}, 32)), name)
	if err != nil {
		t.Fatal(err)
	}
	s, err := note.NewSigner(skey)
	if err != nil {
		t.Fatal(err)
	}
	v, err := eventlog.NewCheckpointVerifier(vkey)
	if err != nil {
		t.Fatal(err)
	}
	return s, v
}

// logWith appends n events to session in a fresh memory log and returns
// the store.
func logWith(t *testing.T, session string, n int) *eventlog.MemoryStore {
	t.Helper()
	m := eventlog.NewMemoryStore()
	l, err := eventlog.New(m, eventlog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for range n {
		if _, err := l.Append(context.Background(), session, eventlog.Event{Kind: eventlog.KindSkip, Code: "x"}); err != nil {
			t.Fatal(err)
		}
	}
	return m
}

// forge returns the envelopes of n skip events of session forged that
// follow head, and the head they lead to.
func forge(forged string, head eventlog.Head, n int) ([][]byte, eventlog.Head) {
	var proof [][]byte
	for range n {
		enc, h := eventlog.ForgeEnvelope(forged, head.Seq+1, head.Hash)
		proof = append(proof, enc)
		head = eventlog.Head{Seq: head.Seq + 1, Hash: h}
	}
	return proof, head
}

// TestWitnessBindsOriginToItsKey: once a witness holds an origin's
// checkpoint, a checkpoint of that origin signed by another of the log
// keys it knows is refused, however the keys' names make the origins
// collide: two logs whose keys share a name (an operator's mistake), or
// key "log.test" with session "eventlog/s" against key
// "log.test/eventlog" with session "s".
func TestWitnessBindsOriginToItsKey(t *testing.T) {
	ctx := context.Background()
	signerA, verifierA := namedKey(t, "log.test/eventlog", 1)
	signerB, verifierB := namedKey(t, "log.test/eventlog", 2) // same name, another key
	signerC, verifierC := namedKey(t, "log.test", 3)          // a shorter name
	for name, c := range map[string]struct {
		signer  note.Signer
		session string
	}{
		"same key name":     {signerB, "s"},
		"key name a prefix": {signerC, "eventlog/s"},
	} {
		t.Run(name, func(t *testing.T) {
			w, err := eventlog.NewWitness(eventlog.NewMemoryStore(), note.VerifierList(verifierA, verifierB, verifierC), nil)
			if err != nil {
				t.Fatal(err)
			}
			store := logWith(t, "s", 3)
			head, _ := store.Head(ctx, "s")
			cpA, err := eventlog.SignCheckpoint(signerA, "s", head)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := w.AddCheckpoint(ctx, 0, nil, cpA); err != nil {
				t.Fatalf("the log's own first checkpoint: %v", err)
			}
			// The other key extends what the witness holds for
			// "log.test/eventlog/s" with envelopes of its own session.
			proof, forged := forge(c.session, head, 2)
			cp, err := eventlog.SignCheckpoint(c.signer, c.session, forged)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := w.AddCheckpoint(ctx, head.Seq, proof, cp); !errors.Is(err, eventlog.CodeCheckpointInvalid) {
				t.Errorf("a checkpoint of the origin by another key = %v, want %s", err, eventlog.CodeCheckpointInvalid)
			}
			// The log's own next checkpoint still goes through.
			l, _ := eventlog.New(store, eventlog.Options{Signer: signerA, Witness: w})
			if _, err := l.Append(ctx, "s", eventlog.Event{Kind: eventlog.KindSkip, Code: "x"}); err != nil {
				t.Fatal(err)
			}
			if _, err := l.Checkpoint(ctx, "s"); err != nil {
				t.Errorf("the log's own next checkpoint: %v", err)
			}
		})
	}
}

// TestOpenCheckpointAmbiguousOrigin: a note signed by two known keys
// whose names split its origin differently names no single session.
func TestOpenCheckpointAmbiguousOrigin(t *testing.T) {
	signerA, verifierA := namedKey(t, "log.test/eventlog", 1)
	signerC, verifierC := namedKey(t, "log.test", 3)
	text := "log.test/eventlog/s\n3\n" + base64.StdEncoding.EncodeToString(make([]byte, 32)) + "\n"
	msg, err := note.Sign(&note.Note{Text: text}, signerC, signerA)
	if err != nil {
		t.Fatal(err)
	}
	if _, cp, err := eventlog.OpenCheckpoint(msg, note.VerifierList(verifierA, verifierC)); !errors.Is(err, eventlog.CodeCheckpointInvalid) {
		t.Errorf("OpenCheckpoint of an origin two keys split differently = %+v, %v; want %s", cp, err, eventlog.CodeCheckpointInvalid)
	}
}

// identityForgery returns a checkpoint of session at head under a key
// named name whose public key is the identity point, with the one
// signature crypto/ed25519 accepts for every message under that key,
// and a verifier of that key built with note.NewVerifier, not
// NewCheckpointVerifier.
func identityForgery(t *testing.T, name, session string, head eventlog.Head) ([]byte, note.Verifier) {
	t.Helper()
	identity := make([]byte, 32)
	identity[0] = 1
	vkey, err := note.NewEd25519VerifierKey(name, ed25519.PublicKey(identity))
	if err != nil {
		t.Fatal(err)
	}
	v, err := note.NewVerifier(vkey)
	if err != nil {
		t.Fatal(err)
	}
	sig := make([]byte, 4+64)
	binary.BigEndian.PutUint32(sig, v.KeyHash())
	sig[4] = 1 // R = the identity, S = 0
	text := name + "/" + session + "\n" + strconvU(head.Seq) + "\n" + base64.StdEncoding.EncodeToString(head.Hash[:]) + "\n"
	return []byte(text + "\n\u2014 " + name + " " + base64.StdEncoding.EncodeToString(sig) + "\n"), v
}

// TestCheckpointRefusesUnadmittedVerifiers: a verifier not admitted by
// NewCheckpointVerifier (here note.NewVerifier of the identity point, for
// which one signature verifies every message) verifies no checkpoint,
// in OpenCheckpoint, VerifyCheckpoint or a witness.
func TestCheckpointRefusesUnadmittedVerifiers(t *testing.T) {
	ctx := context.Background()
	store := logWith(t, "s", 3)
	forged := eventlog.Head{Seq: 9, Hash: eventlog.Hash{9}}
	msg, v := identityForgery(t, "log.test/eventlog", "s", forged)
	if !v.Verify([]byte("anything"), append([]byte{1}, make([]byte, 63)...)) {
		t.Fatal("note's verifier refuses the identity-key forgery: the test proves nothing")
	}
	if _, cp, err := eventlog.OpenCheckpoint(msg, note.VerifierList(v)); !errors.Is(err, eventlog.CodeCheckpointInvalid) {
		t.Errorf("OpenCheckpoint with an unadmitted verifier = %+v, %v; want %s", cp, err, eventlog.CodeCheckpointInvalid)
	}
	if _, err := eventlog.VerifyCheckpoint(ctx, store, "s", msg, note.VerifierList(v)); !errors.Is(err, eventlog.CodeCheckpointInvalid) {
		t.Errorf("VerifyCheckpoint with an unadmitted verifier = %v, want %s", err, eventlog.CodeCheckpointInvalid)
	}
	w, err := eventlog.NewWitness(eventlog.NewMemoryStore(), note.VerifierList(v), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.AddCheckpoint(ctx, 0, nil, msg); !errors.Is(err, eventlog.CodeCheckpointInvalid) {
		t.Errorf("witness with an unadmitted verifier = %v, want %s", err, eventlog.CodeCheckpointInvalid)
	}
}

// TestOpenCheckpointQuotesKeyNames: a bad signature by a known key is
// refused without the hostile key name reaching the error unquoted.
func TestOpenCheckpointQuotesKeyNames(t *testing.T) {
	name := "log.test/eventlog\u009b31m"
	signer, v := namedKey(t, name, 4)
	cp, err := eventlog.SignCheckpoint(signer, "s", eventlog.Head{Seq: 1, Hash: eventlog.Hash{1}})
	if err != nil {
		t.Fatal(err)
	}
	bad := bytes.Replace(cp, []byte("\n1\n"), []byte("\n2\n"), 1)
	_, _, err = eventlog.OpenCheckpoint(bad, note.VerifierList(v))
	if !errors.Is(err, eventlog.CodeCheckpointInvalid) {
		t.Fatalf("OpenCheckpoint of a bad signature = %v, want %s", err, eventlog.CodeCheckpointInvalid)
	}
	if strings.Contains(err.Error(), "\u009b") {
		t.Errorf("the error holds the key name's C1 control unquoted: %q", err)
	}
}

// TestWitnessConcurrentForks: two forks of one log at the same size
// submitted at once, and again as extensions, leave exactly one
// accepted; the witness never moves back.
func TestWitnessConcurrentForks(t *testing.T) {
	ctx := context.Background()
	signer, verifiers := eventlogtest.CheckpointKeys(t, 1)
	for round := range 20 {
		w, _ := eventlog.NewWitness(eventlog.NewMemoryStore(), verifiers, nil)
		base := logWith(t, "s", 2)
		head, _ := base.Head(ctx, "s")
		cp, _ := eventlog.SignCheckpoint(signer, "s", head)
		if _, err := w.AddCheckpoint(ctx, 0, nil, cp); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		errs := make([]error, 8)
		for i := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				// Each fork has its own code, so its own head.
				p, h := forgeCoded("s", head, 1+i%2, i)
				c, _ := eventlog.SignCheckpoint(signer, "s", h)
				_, errs[i] = w.AddCheckpoint(ctx, head.Seq, p, c)
			}()
		}
		wg.Wait()
		wins := 0
		for _, err := range errs {
			if err == nil {
				wins++
			} else if !errors.Is(err, eventlog.CodeCheckpointConflict) {
				t.Errorf("round %d: %v", round, err)
			}
		}
		if wins != 1 {
			t.Fatalf("round %d: %d forks accepted from one witnessed head, want 1", round, wins)
		}
	}
}

// forgeCoded is forge with a code that tells forks apart.
func forgeCoded(forged string, head eventlog.Head, n, code int) ([][]byte, eventlog.Head) {
	var proof [][]byte
	for range n {
		enc, h := eventlog.ForgeEnvelopeCode(forged, head.Seq+1, head.Hash, strconvU(uint64(code)))
		proof = append(proof, enc)
		head = eventlog.Head{Seq: head.Seq + 1, Hash: h}
	}
	return proof, head
}

func strconvU(n uint64) string { return strconv.FormatUint(n, 10) }

// TestWitnessChecksItsHeldState: a witness whose stored size and hash
// were changed without a checkpoint of that head (a write to its table)
// refuses to build on them.
func TestWitnessChecksItsHeldState(t *testing.T) {
	ctx := context.Background()
	signer, verifiers := eventlogtest.CheckpointKeys(t, 1)
	ws := eventlog.NewMemoryStore()
	w, _ := eventlog.NewWitness(ws, verifiers, nil)
	store := logWith(t, "s", 4)
	recs, _ := store.Read(ctx, "s", 1, 4)
	cp2, _ := eventlog.SignCheckpoint(signer, "s", eventlog.Head{Seq: 2, Hash: recs[1].Hash})
	if _, err := w.AddCheckpoint(ctx, 0, nil, cp2); err != nil {
		t.Fatal(err)
	}
	origin := "log.test/eventlog/s"
	held, _ := ws.Witnessed(ctx, origin)
	// Roll the held size back to 1 with seq 1's hash, keeping the
	// checkpoint of seq 2 beside it.
	if err := ws.Witness(ctx, origin, held, eventlog.WitnessState{Size: 1, Hash: recs[0].Hash, Checkpoint: held.Checkpoint}); err != nil {
		t.Fatal(err)
	}
	cp4, _ := eventlog.SignCheckpoint(signer, "s", eventlog.Head{Seq: 4, Hash: recs[3].Hash})
	proof := [][]byte{recs[1].Envelope, recs[2].Envelope, recs[3].Envelope}
	if _, err := w.AddCheckpoint(ctx, 1, proof, cp4); !errors.Is(err, eventlog.CodeCheckpointInvalid) {
		t.Errorf("AddCheckpoint over a held state that its checkpoint does not match = %v, want %s", err, eventlog.CodeCheckpointInvalid)
	}
}

// TestWitnessKeyRotation: a log rotates its key through the witness by
// signing one checkpoint with the old and the new key; from then on the
// new key alone is accepted, and the old key's name-twin is not.
func TestWitnessKeyRotation(t *testing.T) {
	ctx := context.Background()
	oldS, oldV := namedKey(t, "log.test/eventlog", 1)
	newS, newV := namedKey(t, "log.test/eventlog", 2)
	w, _ := eventlog.NewWitness(eventlog.NewMemoryStore(), note.VerifierList(oldV, newV), nil)
	store := logWith(t, "s", 3)
	recs, _ := store.Read(ctx, "s", 1, 3)
	head := func(i int) eventlog.Head { return eventlog.Head{Seq: uint64(i), Hash: recs[i-1].Hash} }
	cp1, _ := eventlog.SignCheckpoint(oldS, "s", head(1))
	if _, err := w.AddCheckpoint(ctx, 0, nil, cp1); err != nil {
		t.Fatal(err)
	}
	cp2, _ := eventlog.SignCheckpoint(newS, "s", head(2))
	if _, err := w.AddCheckpoint(ctx, 1, [][]byte{recs[1].Envelope}, cp2); !errors.Is(err, eventlog.CodeCheckpointInvalid) {
		t.Errorf("the new key before the rotation = %v, want %s", err, eventlog.CodeCheckpointInvalid)
	}
	both, err := note.Sign(&note.Note{Text: strings.SplitN(string(cp2), "\n\n", 2)[0] + "\n"}, oldS, newS)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.AddCheckpoint(ctx, 1, [][]byte{recs[1].Envelope}, both); err != nil {
		t.Fatalf("the rotation checkpoint, signed by both keys: %v", err)
	}
	cp3, _ := eventlog.SignCheckpoint(newS, "s", head(3))
	if _, err := w.AddCheckpoint(ctx, 2, [][]byte{recs[2].Envelope}, cp3); err != nil {
		t.Errorf("the new key after the rotation: %v", err)
	}
}
