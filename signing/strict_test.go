package signing

import (
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"filippo.io/edwards25519"

	"github.com/checkfu/checkfu/internal/sigtest"
)

// vectorsDir is where the vendored vectors live (see its README). A
// missing file fails the test that reads it: a vector test never skips.
func vectorsDir(t *testing.T) string {
	t.Helper()
	return filepath.Join("testdata", "vectors")
}

func mustHex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// strictVerify applies the strict verification rules to a raw key:
// the per-key half (newStrictKey) and the per-signature half (verify).
func strictVerify(pub, msg, sig []byte) bool {
	k, err := newStrictKey(pub)
	return err == nil && k.Verify(msg, sig)
}

func TestSpeccheckStrictVerify(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(vectorsDir(t), "ed25519_speccheck_cases.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		Message   string `json:"message"`
		PubKey    string `json:"pub_key"`
		Signature string `json:"signature"`
	}
	if err := json.Unmarshal(data, &cases); err != nil {
		t.Fatal(err)
	}
	if len(cases) != 12 {
		t.Fatalf("%d speccheck cases, want 12", len(cases))
	}
	// Why each case fails strict verification (see docs/receipts.md):
	why := []string{
		0:  "A and R both of small order (S = 0): refused per key (small-order A) and per signature (small-order R)",
		1:  "A of small order (R mixed order): refused per key",
		2:  "R of small order (A mixed order): refused per signature",
		3:  "", // A and R of mixed order, cofactorless equation holds: strict verify accepts; admission refuses A
		4:  "only the cofactored equation holds (A and R mixed order): crypto/ed25519 refuses",
		5:  "only the cofactored equation holds (A mixed order, R prime order): crypto/ed25519 refuses",
		6:  "S >= L: crypto/ed25519 refuses",
		7:  "S >= L (high bits set): crypto/ed25519 refuses",
		8:  "non-canonical R of small order, equation fails: refused per signature and by crypto/ed25519",
		9:  "non-canonical R of small order: refused per signature and by crypto/ed25519 (R is compared byte for byte)",
		10: "non-canonical A of small order, cofactorless equation fails: refused per key and by crypto/ed25519",
		11: "non-canonical A of small order: refused per key; crypto/ed25519 accepts it",
	}
	for i, c := range cases {
		pub, msg, sig := mustHex(t, c.PubKey), mustHex(t, c.Message), mustHex(t, c.Signature)
		got := strictVerify(pub, msg, sig)
		if want := why[i] == ""; got != want {
			t.Errorf("case %d: strict verify = %v, want %v (%s)", i, got, want, why[i])
		}
		goAccepts := ed25519.Verify(ed25519.PublicKey(pub), msg, sig)
		wantGo := i == 0 || i == 1 || i == 2 || i == 3 || i == 11
		if goAccepts != wantGo {
			t.Errorf("case %d: crypto/ed25519.Verify = %v, want %v (the vectors changed?)", i, goAccepts, wantGo)
		}
	}
}

func TestAdmissionRefusesMixedOrderKey(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(vectorsDir(t), "ed25519_speccheck_cases.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		PubKey string `json:"pub_key"`
	}
	if err := json.Unmarshal(data, &cases); err != nil {
		t.Fatal(err)
	}
	if _, err := newStrictKey(mustHex(t, cases[3].PubKey)); err != nil {
		t.Fatalf("newStrictKey(case 3) = %v, want accepted by the strict verify rules", err)
	}
	_, err = admitKey(mustHex(t, cases[3].PubKey))
	if !errors.Is(err, CodeKeyMixedOrder) {
		t.Fatalf("admitKey(case 3) = %v, want %s", err, CodeKeyMixedOrder)
	}
	for i, want := range map[int]error{0: CodeKeySmallOrder, 1: CodeKeySmallOrder, 10: CodeKeyInvalid, 11: CodeKeyInvalid} {
		if _, err := admitKey(mustHex(t, cases[i].PubKey)); !errors.Is(err, want) {
			t.Errorf("admitKey(case %d) = %v, want %s", i, err, want)
		}
	}
}

func TestWycheproof(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(vectorsDir(t), "ed25519_wycheproof.json"))
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		NumberOfTests int `json:"numberOfTests"`
		TestGroups    []struct {
			PublicKey struct {
				PK string `json:"pk"`
			} `json:"publicKey"`
			Tests []struct {
				TcID   int    `json:"tcId"`
				Msg    string `json:"msg"`
				Sig    string `json:"sig"`
				Result string `json:"result"`
			} `json:"tests"`
		} `json:"testGroups"`
	}
	if err := json.Unmarshal(data, &file); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, g := range file.TestGroups {
		pub := mustHex(t, g.PublicKey.PK)
		for _, tc := range g.Tests {
			n++
			got := strictVerify(pub, mustHex(t, tc.Msg), mustHex(t, tc.Sig))
			if want := tc.Result == "valid"; got != want {
				t.Errorf("tcId %d: strict verify = %v, want %v (%s)", tc.TcID, got, want, tc.Result)
			}
		}
	}
	if n != 151 || file.NumberOfTests != 151 {
		t.Fatalf("ran %d Wycheproof tests (file says %d), want 151", n, file.NumberOfTests)
	}
}

// TestSmallOrderEncodings derives the small-order table independently:
// the eight multiples of a point of order 8 are exactly the small-order
// points, and every listed string decodes to one of them.
func TestSmallOrderEncodings(t *testing.T) {
	p8, err := new(edwards25519.Point).SetBytes(mustHex(t, "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa"))
	if err != nil {
		t.Fatal(err)
	}
	identity := edwards25519.NewIdentityPoint()
	listed := map[[32]byte]bool{}
	for _, e := range smallOrderEncodings {
		if listed[e] {
			t.Errorf("%x listed twice", e)
		}
		listed[e] = true
		p, err := new(edwards25519.Point).SetBytes(e[:])
		if err != nil {
			t.Errorf("%x does not decode", e)
			continue
		}
		if new(edwards25519.Point).MultByCofactor(p).Equal(identity) != 1 {
			t.Errorf("%x is not of small order", e)
		}
	}
	q := edwards25519.NewIdentityPoint()
	found := 0
	for i := 0; i < 8; i++ {
		c := [32]byte(q.Bytes())
		if !listed[c] {
			t.Errorf("[%d]P8 = %x is missing", i, c)
		}
		// Every encoding of the same point: flip the sign bit, add p to y.
		for _, v := range encodingsOf(c) {
			if p, err := new(edwards25519.Point).SetBytes(v[:]); err == nil && p.Equal(q) == 1 {
				found++
				if !listed[v] {
					t.Errorf("non-canonical encoding %x of [%d]P8 is missing", v, i)
				}
			}
		}
		q.Add(q, p8)
	}
	if found != len(smallOrderEncodings) {
		t.Errorf("derived %d encodings, table has %d", found, len(smallOrderEncodings))
	}
}

// encodingsOf returns c, c with the sign bit flipped, and both again with
// p = 2^255-19 added to y when that still fits in 255 bits.
func encodingsOf(c [32]byte) [][32]byte {
	out := [][32]byte{c}
	flip := c
	flip[31] ^= 0x80
	out = append(out, flip)
	// y + p over 255 bits, little-endian.
	y := c
	y[31] &= 0x7f
	var sum [32]byte
	pBytes := [32]byte{0: 0xed, 31: 0x7f}
	for i := 1; i < 31; i++ {
		pBytes[i] = 0xff
	}
	carry := 0
	for i := 0; i < 32; i++ {
		s := int(y[i]) + int(pBytes[i]) + carry
		sum[i], carry = byte(s), s>>8
	}
	if carry == 0 && sum[31]&0x80 == 0 {
		sign := c[31] & 0x80
		a, b := sum, sum
		a[31] |= sign
		b[31] |= sign ^ 0x80
		out = append(out, a, b)
	}
	return out
}

func TestStrictRefusesSmallOrderR(t *testing.T) {
	// With R = identity, S = k*a mod L where k = H(R || A || M): a valid
	// cofactorless signature whose R is of small order.
	seed := make([]byte, 32)
	seed[0] = 7
	priv := ed25519.NewKeyFromSeed(seed)
	pub := priv.Public().(ed25519.PublicKey)
	msg := []byte("small-order R")
	sig := sigtest.SignWithIdentityR(priv, msg)
	if !ed25519.Verify(pub, msg, sig) {
		t.Fatal("crypto/ed25519 refuses the R = identity signature; the test is not exercising the strict rule")
	}
	k, err := admitKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	if k.Verify(msg, sig) {
		t.Fatal("strict verify accepted a signature whose R is the identity")
	}
}

func TestSmallOrderKeyRefused(t *testing.T) {
	identity := make([]byte, 32)
	identity[0] = 1
	forged := make([]byte, 64)
	forged[0] = 1
	if !ed25519.Verify(ed25519.PublicKey(identity), []byte("anything"), forged) {
		t.Fatal("crypto/ed25519 no longer accepts the identity-key forgery; revisit this test")
	}
	for _, raw := range [][]byte{identity, mustHex(t, "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f"), mustHex(t, "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa")} {
		_, err := ParseAttesterSet(setJSON(entry{Name: "evil", PublicKeyPEM: rawKeyPEM(t, raw)}))
		if !errors.Is(err, CodeKeySmallOrder) {
			t.Errorf("set with small-order key %x: %v, want %s", raw, err, CodeKeySmallOrder)
		}
	}
	if _, err := ParsePublicKey(identity); !errors.Is(err, CodeKeySmallOrder) {
		t.Errorf("ParsePublicKey(identity) = %v, want %s", err, CodeKeySmallOrder)
	}
	// An envelope "signed" by the identity key names a key no set can hold.
	_, id := publicKeyPEM(identity)
	env := marshalEnvelope(testType, []byte("anything"), id, forged)
	if _, _, err := testSet(t, testSigner(1)).VerifyPayload(env, testType); !errors.Is(err, CodeAttesterUnknown) {
		t.Errorf("identity-key envelope: %v, want %s", err, CodeAttesterUnknown)
	}
}

// TestKeyIDOfAdmits: KeyIDOf names only keys admission accepts, at
// the edge of each rule.
func TestKeyIDOfAdmits(t *testing.T) {
	if _, err := KeyIDOf(testSigner(1).PublicKeyPEM()); err != nil {
		t.Fatalf("KeyIDOf(good key) = %v", err)
	}
	for name, tc := range map[string]struct {
		raw  string
		want error
	}{
		"identity":    {"0100000000000000000000000000000000000000000000000000000000000000", CodeKeySmallOrder},
		"mixed order": {"cdb267ce40c5cd45306fa5d2f29731459387dbf9eb933b7bd5aed9a765b88d4d", CodeKeyMixedOrder},
	} {
		if _, err := KeyIDOf([]byte(rawKeyPEM(t, mustHex(t, tc.raw)))); !errors.Is(err, tc.want) {
			t.Errorf("KeyIDOf(%s) = %v, want %v", name, err, tc.want)
		}
	}
}
