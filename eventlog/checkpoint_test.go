package eventlog_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha512"
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"filippo.io/edwards25519"
	"golang.org/x/mod/sumdb/note"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/eventlog"
	"github.com/checkfu/checkfu/eventlog/eventlogtest"
)

// signText signs an arbitrary note body with the fixed checkpoint key.
func signText(t *testing.T, text string) []byte {
	t.Helper()
	signer, _ := eventlogtest.CheckpointKeys(t, 1)
	msg, err := note.Sign(&note.Note{Text: text}, signer)
	if err != nil {
		t.Fatal(err)
	}
	return msg
}

func TestCheckpointFormat(t *testing.T) {
	signer, verifiers := eventlogtest.CheckpointKeys(t, 1)
	head := eventlog.Head{Seq: 12, Hash: eventlog.Hash{1, 2, 3}}
	msg, err := eventlog.SignCheckpoint(signer, "sess-1", head)
	if err != nil {
		t.Fatal(err)
	}
	text, _, _ := strings.Cut(string(msg), "\n\n")
	want := "log.test/eventlog/sess-1\n12\n" + base64.StdEncoding.EncodeToString(head.Hash[:])
	if text != want {
		t.Errorf("checkpoint body = %q, want %q", text, want)
	}
	if !strings.HasPrefix(string(msg[len(text)+2:]), "— log.test/eventlog ") {
		t.Errorf("checkpoint signature line = %q, want a note signature by log.test/eventlog", msg[len(text)+2:])
	}
	n, cp, err := eventlog.OpenCheckpoint(msg, verifiers)
	if err != nil || cp.Session != "sess-1" || cp.Origin != "log.test/eventlog/sess-1" || cp.Head != head || len(n.Sigs) != 1 {
		t.Errorf("OpenCheckpoint = %+v, %+v, %v", n, cp, err)
	}
	if _, err := eventlog.SignCheckpoint(signer, "sess-1", eventlog.Head{}); !errors.Is(err, eventlog.CodeEventNotFound) {
		t.Errorf("SignCheckpoint of an empty session = %v, want %s", err, eventlog.CodeEventNotFound)
	}
	if _, err := eventlog.SignCheckpoint(nil, "sess-1", head); !errors.Is(err, eventlog.CodeCheckpointSignerMissing) {
		t.Errorf("SignCheckpoint without a signer = %v, want %s", err, eventlog.CodeCheckpointSignerMissing)
	}
}

// TestOpenCheckpointRefuses: every malformed or foreign checkpoint is a
// checkpoint_invalid refusal.
func TestOpenCheckpointRefuses(t *testing.T) {
	_, verifiers := eventlogtest.CheckpointKeys(t, 1)
	otherSigner, _ := eventlogtest.CheckpointKeys(t, 2)
	hash := base64.StdEncoding.EncodeToString(make([]byte, 32))
	good := signText(t, "log.test/eventlog/s\n3\n"+hash+"\n")
	if _, _, err := eventlog.OpenCheckpoint(good, verifiers); err != nil {
		t.Fatalf("OpenCheckpoint(good) = %v", err)
	}
	foreign, _ := note.Sign(&note.Note{Text: "log.test/eventlog/s\n3\n" + hash + "\n"}, otherSigner)
	tampered := bytes.Replace(good, []byte("\n3\n"), []byte("\n4\n"), 1)
	tests := map[string][]byte{
		"unknown key":                foreign,
		"body changed":               tampered,
		"not a note":                 []byte("log.test/eventlog/s\n3\n" + hash + "\n"),
		"origin of another key":      signText(t, "other.test/s\n3\n"+hash+"\n"),
		"origin is the key name":     signText(t, "log.test/eventlog\n3\n"+hash+"\n"),
		"origin names no session":    signText(t, "log.test/eventlog/a b\n3\n"+hash+"\n"),
		"extension line":             signText(t, "log.test/eventlog/s\n3\n"+hash+"\nextra\n"),
		"two lines":                  signText(t, "log.test/eventlog/s\n3\n"),
		"size zero":                  signText(t, "log.test/eventlog/s\n0\n"+hash+"\n"),
		"leading zero":               signText(t, "log.test/eventlog/s\n03\n"+hash+"\n"),
		"signed size":                signText(t, "log.test/eventlog/s\n+3\n"+hash+"\n"),
		"short hash":                 signText(t, "log.test/eventlog/s\n3\n"+base64.StdEncoding.EncodeToString(make([]byte, 31))+"\n"),
		"hash not base64":            signText(t, "log.test/eventlog/s\n3\n"+strings.Repeat("!", 44)+"\n"),
		"hash with non-zero padding": signText(t, "log.test/eventlog/s\n3\n"+hash[:42]+"B=\n"),
		"huge":                       signText(t, "log.test/eventlog/s\n3\n"+hash+"\n"+strings.Repeat("x", 20<<10)+"\n"),
	}
	for name, msg := range tests {
		if _, _, err := eventlog.OpenCheckpoint(msg, verifiers); !errors.Is(err, eventlog.CodeCheckpointInvalid) {
			t.Errorf("%s: OpenCheckpoint = %v, want %s", name, err, eventlog.CodeCheckpointInvalid)
		}
	}
}

// TestCheckpointVerifierAdmission: a verifier key that is not a strict
// Ed25519 key is refused. With the identity point as key, one fixed
// signature verifies every message under crypto/ed25519.
func TestCheckpointVerifierAdmission(t *testing.T) {
	identity := make([]byte, 32)
	identity[0] = 1
	nonCanonical := bytes.Repeat([]byte{0xff}, 32) // y >= p
	nonCanonical[31] = 0x7f
	// A point of order 8 plus a prime-order point: mixed order.
	good, _, _ := ed25519.GenerateKey(bytes.NewReader(make([]byte, 32)))
	for name, key := range map[string][]byte{"identity": identity, "non-canonical": nonCanonical} {
		vkey, err := note.NewEd25519VerifierKey("log.test/eventlog", ed25519.PublicKey(key))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := eventlog.NewCheckpointVerifier(vkey); !errors.Is(err, checkfu.CodeConfigInvalid) {
			t.Errorf("%s key: NewCheckpointVerifier = %v, want %s", name, err, checkfu.CodeConfigInvalid)
		}
	}
	for seed := range byte(64) {
		// Some of these keys have '+' and '/' in their base64.
		pub, _, _ := ed25519.GenerateKey(bytes.NewReader(bytes.Repeat([]byte{seed}, 32)))
		vkey, _ := note.NewEd25519VerifierKey("log.test/eventlog", pub)
		if _, err := eventlog.NewCheckpointVerifier(vkey); err != nil {
			t.Errorf("NewCheckpointVerifier(%q) = %v", vkey, err)
		}
	}
	// A prime-order key plus the point of order 2: not of small order,
	// but outside the prime-order subgroup.
	p, err := new(edwards25519.Point).SetBytes(good)
	if err != nil {
		t.Fatal(err)
	}
	var t2 [32]byte
	t2[0] = 0xec
	for i := 1; i < 31; i++ {
		t2[i] = 0xff
	}
	t2[31] = 0x7f // (0, -1), of order 2
	two, err := new(edwards25519.Point).SetBytes(t2[:])
	if err != nil {
		t.Fatal(err)
	}
	mixed := new(edwards25519.Point).Add(p, two).Bytes()
	vmixed, _ := note.NewEd25519VerifierKey("log.test/eventlog", ed25519.PublicKey(mixed))
	if _, err := eventlog.NewCheckpointVerifier(vmixed); !errors.Is(err, checkfu.CodeConfigInvalid) {
		t.Errorf("mixed-order key: NewCheckpointVerifier = %v, want %s", err, checkfu.CodeConfigInvalid)
	}
	vkey, _ := note.NewEd25519VerifierKey("log.test/eventlog", good)
	v, err := eventlog.NewCheckpointVerifier(vkey)
	if err != nil {
		t.Fatalf("NewCheckpointVerifier(a good key) = %v", err)
	}
	// A key holder can sign with R the identity (small order), and
	// crypto/ed25519 accepts it: S = H(R || A || M) * a.
	msg := []byte("m")
	h := sha512.Sum512(make([]byte, 32)) // the seed of good
	a, err := new(edwards25519.Scalar).SetBytesWithClamping(h[:32])
	if err != nil {
		t.Fatal(err)
	}
	identity32 := edwards25519.NewIdentityPoint().Bytes()
	kh := sha512.New()
	kh.Write(identity32)
	kh.Write(good)
	kh.Write(msg)
	k, err := new(edwards25519.Scalar).SetUniformBytes(kh.Sum(nil))
	if err != nil {
		t.Fatal(err)
	}
	sig := append(identity32, new(edwards25519.Scalar).Multiply(k, a).Bytes()...)
	if !ed25519.Verify(good, msg, sig) {
		t.Fatal("crypto/ed25519 refuses the small-order-R signature: the check below proves nothing")
	}
	if v.Verify(msg, sig) {
		t.Error("a signature with a small-order R verified")
	}
	for _, bad := range []string{"", "name", "name+00000000+AAAA", "log.test+1234abcd+" + base64.StdEncoding.EncodeToString(append([]byte{2}, good...))} {
		if _, err := eventlog.NewCheckpointVerifier(bad); !errors.Is(err, checkfu.CodeConfigInvalid) {
			t.Errorf("NewCheckpointVerifier(%q) = %v, want %s", bad, err, checkfu.CodeConfigInvalid)
		}
	}
}

func TestCheckpointNeedsSigner(t *testing.T) {
	l, _ := eventlog.New(eventlog.NewMemoryStore(), eventlog.Options{})
	if _, err := l.Checkpoint(context.Background(), "s"); !errors.Is(err, eventlog.CodeCheckpointSignerMissing) {
		t.Errorf("Checkpoint without a signer = %v, want %s", err, eventlog.CodeCheckpointSignerMissing)
	}
	_, verifiers := eventlogtest.CheckpointKeys(t, 1)
	w, _ := eventlog.NewWitness(eventlog.NewMemoryStore(), verifiers, nil)
	if _, err := eventlog.New(eventlog.NewMemoryStore(), eventlog.Options{Witness: w}); !errors.Is(err, eventlog.CodeCheckpointSignerMissing) {
		t.Errorf("New with a witness and no signer = %v, want %s", err, eventlog.CodeCheckpointSignerMissing)
	}
	signer, _ := eventlogtest.CheckpointKeys(t, 1)
	l, _ = eventlog.New(eventlog.NewMemoryStore(), eventlog.Options{Signer: signer})
	if _, err := l.Checkpoint(context.Background(), "s"); !errors.Is(err, eventlog.CodeEventNotFound) {
		t.Errorf("Checkpoint of an empty session = %v, want %s", err, eventlog.CodeEventNotFound)
	}
}

// FuzzOpenCheckpoint: whatever the body, a checkpoint that opens is the
// exact text SignCheckpoint writes for what it parsed to
// (non-malleability), and nothing panics.
func FuzzOpenCheckpoint(f *testing.F) {
	hash := base64.StdEncoding.EncodeToString(make([]byte, 32))
	for _, s := range []string{
		"log.test/eventlog/s\n3\n" + hash + "\n",
		"log.test/eventlog/s\n03\n" + hash + "\n",
		"log.test/eventlog/s\n3\n" + hash + "\next\n",
		"log.test/eventlog/\n1\n" + hash + "\n",
		"\n\n\n",
	} {
		f.Add(s)
	}
	signer, verifiers := eventlogtest.CheckpointKeys(f, 1)
	f.Fuzz(func(t *testing.T, text string) {
		msg, err := note.Sign(&note.Note{Text: text}, signer)
		if err != nil {
			return
		}
		_, cp, err := eventlog.OpenCheckpoint(msg, verifiers)
		if err != nil {
			return
		}
		again, err := eventlog.SignCheckpoint(signer, cp.Session, cp.Head)
		if err != nil {
			t.Fatalf("SignCheckpoint of what %q parsed to: %v", text, err)
		}
		if body, _, _ := strings.Cut(string(again), "\n\n"); body+"\n" != text {
			t.Fatalf("%q opened as %+v, which is written %q", text, cp, body+"\n")
		}
	})
}
