package custody

import (
	"bytes"
	"crypto/hkdf"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/custody/address"
	"golang.org/x/crypto/chacha20poly1305"
)

// fixedKeyset returns a keyset whose versions all hold the root key
// 00 01 02 ... 1f.
func fixedKeyset(t *testing.T, primary uint32, versions ...uint32) *Keyset {
	t.Helper()
	roots := map[uint32]*Secret{}
	for _, v := range versions {
		k := make([]byte, RootKeySize)
		for i := range k {
			k[i] = byte(i)
		}
		roots[v] = NewSecret(k)
	}
	ks, err := NewKeyset(primary, roots)
	if err != nil {
		t.Fatal(err)
	}
	return ks
}

var testHandle = address.MustParseHandle("ch_aaaaaaaaaaaaaaaaaaaaaaaaaa")

func testBinding() Binding {
	return Binding{Namespace: "github", Integration: "deploy-token", Handle: testHandle}
}

// lp is the test's own length prefix, written independently of appendLP.
func lp(s string) string {
	var n [4]byte
	binary.BigEndian.PutUint32(n[:], uint32(len(s)))
	return string(n[:]) + s
}

func TestADLayout(t *testing.T) {
	got := appendAD(nil, testBinding(), 7)
	want := lp("checkfu.custody.record.v1") + lp("github") + lp("deploy-token") + lp("ch_aaaaaaaaaaaaaaaaaaaaaaaaaa") + lp("\x00\x00\x00\x07")
	if string(got) != want {
		t.Fatalf("appendAD =\n%s\nwant\n%s", hex.Dump(got), hex.Dump([]byte(want)))
	}
	const golden = "00000019636865636b66752e637573746f64792e7265636f72642e7631" +
		"00000006676974687562" + "0000000c6465706c6f792d746f6b656e" +
		"0000001d63685f6161616161616161616161616161616161616161616161616161" + "0000000400000007"
	if hex.EncodeToString(got) != golden {
		t.Fatalf("appendAD = %x, want the golden %s", got, golden)
	}
}

// TestADScratchHoldsTheLongestAD checks that the associated data of the
// longest valid binding fills the pooled scratch buffer exactly: it is
// built in the buffer, never in a new allocation beside it.
func TestADScratchHoldsTheLongestAD(t *testing.T) {
	name := strings.Repeat("n", address.MaxNameLen)
	b := Binding{Namespace: name, Integration: name, Handle: testHandle}
	if err := b.Validate(); err != nil {
		t.Fatal(err)
	}
	ad, scratch := getAD(b, 1<<32-1)
	defer adScratchPool.Put(scratch)
	if len(ad) != maxADLen || &ad[0] != &scratch[0] {
		t.Fatalf("the longest AD has %d bytes (maxADLen %d), in the scratch buffer: %v", len(ad), maxADLen, &ad[0] == &scratch[0])
	}
	if !bytes.Equal(ad, appendAD(nil, b, 1<<32-1)) {
		t.Fatal("getAD and appendAD disagree")
	}
}

func TestADDistinguishesEveryComponent(t *testing.T) {
	base := testBinding()
	other := address.MustParseHandle("ch_bbbbbbbbbbbbbbbbbbbbbbbbba")
	variants := map[string]struct {
		b Binding
		v uint32
	}{
		"base":           {base, 1},
		"namespace":      {Binding{Namespace: "github2", Integration: base.Integration, Handle: base.Handle}, 1},
		"integration":    {Binding{Namespace: base.Namespace, Integration: "deploy-token2", Handle: base.Handle}, 1},
		"handle":         {Binding{Namespace: base.Namespace, Integration: base.Integration, Handle: other}, 1},
		"version":        {base, 2},
		"boundary-shift": {Binding{Namespace: "githubdeploy-", Integration: "token", Handle: base.Handle}, 1},
		"shift-back":     {Binding{Namespace: "git", Integration: "hubdeploy-token", Handle: base.Handle}, 1},
	}
	seen := map[string]string{}
	for name, x := range variants {
		ad := string(appendAD(nil, x.b, x.v))
		if prev, dup := seen[ad]; dup {
			t.Errorf("%s and %s give the same associated data", name, prev)
		}
		seen[ad] = name
	}
}

// TestSealMatchesReference opens a record with a subkey and associated
// data computed here, independently of the package: HKDF-SHA256 over the
// root key with info = label || len || namespace, then XChaCha20-Poly1305.
func TestSealMatchesReference(t *testing.T) {
	ks := fixedKeyset(t, 3, 3)
	b := testBinding()
	sealed, err := ks.Seal(b, NewSecret([]byte("reference-plaintext")))
	if err != nil {
		t.Fatal(err)
	}
	if sealed[0] != 1 || binary.BigEndian.Uint32(sealed[1:5]) != 3 {
		t.Fatalf("header = %x, want format 01 and version 00000003", sealed[:5])
	}
	root := make([]byte, 32)
	for i := range root {
		root[i] = byte(i)
	}
	sub, err := hkdf.Key(sha256.New, root, nil, "checkfu custody namespace subkey v1"+lp("github"), 32)
	if err != nil {
		t.Fatal(err)
	}
	a, err := chacha20poly1305.NewX(sub)
	if err != nil {
		t.Fatal(err)
	}
	ad := lp("checkfu.custody.record.v1") + lp("github") + lp("deploy-token") + lp(testHandle.String()) + lp("\x00\x00\x00\x03")
	plain, err := a.Open(nil, sealed[5:29], sealed[29:], []byte(ad))
	if err != nil {
		t.Fatalf("reference open failed: %v", err)
	}
	if string(plain) != "reference-plaintext" {
		t.Fatalf("reference open = %q", plain)
	}
	if len(sealed) != len("reference-plaintext")+SealOverhead {
		t.Fatalf("len(sealed) = %d, want %d", len(sealed), len("reference-plaintext")+SealOverhead)
	}
}

// TestKeyVersionIsBound uses a keyset whose versions 1 and 2 hold the same
// root key, so only the version in the associated data tells them apart.
func TestKeyVersionIsBound(t *testing.T) {
	ks := fixedKeyset(t, 1, 1, 2)
	b := testBinding()
	sealed, err := ks.Seal(b, NewSecret([]byte("version-bound")))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ks.Open(b, sealed); err != nil {
		t.Fatalf("Open: %v", err)
	}
	relabelled := bytes.Clone(sealed)
	binary.BigEndian.PutUint32(relabelled[1:5], 2)
	_, err = ks.Open(b, relabelled)
	if !errors.Is(err, CodeAddressMismatch) {
		t.Fatalf("Open of a record relabelled to version 2: %v, want %s", err, CodeAddressMismatch)
	}
}

func TestOpenRefusals(t *testing.T) {
	ks := fixedKeyset(t, 1, 1)
	b := testBinding()
	sealed, err := ks.Seal(b, NewSecret([]byte("x")))
	if err != nil {
		t.Fatal(err)
	}
	badFormat := bytes.Clone(sealed)
	badFormat[0] = 2
	unknown := bytes.Clone(sealed)
	binary.BigEndian.PutUint32(unknown[1:5], 9)
	flipped := bytes.Clone(sealed)
	flipped[10] ^= 0x80
	cases := []struct {
		name   string
		ks     *Keyset
		b      Binding
		sealed []byte
		want   checkfu.Code
	}{
		{"empty", ks, b, nil, CodeRecordMalformed},
		{"short", ks, b, sealed[:SealOverhead-1], CodeRecordMalformed},
		{"format", ks, b, badFormat, CodeRecordMalformed},
		{"unknown version", ks, b, unknown, CodeKeyVersionUnknown},
		{"flipped nonce bit", ks, b, flipped, CodeAddressMismatch},
		{"zero keyset", &Keyset{}, b, sealed, CodeKeysetInvalid},
		{"nil keyset", nil, b, sealed, CodeKeysetInvalid},
		{"zero binding", ks, Binding{}, sealed, address.CodeBindingInvalid},
	}
	for _, c := range cases {
		_, err := c.ks.Open(c.b, c.sealed)
		if !errors.Is(err, c.want) {
			t.Errorf("%s: Open error = %v, want %s", c.name, err, c.want)
		}
		_, err = c.ks.Rewrap(c.b, c.sealed)
		if !errors.Is(err, c.want) {
			t.Errorf("%s: Rewrap error = %v, want %s", c.name, err, c.want)
		}
	}
	destroyed := NewSecret([]byte("gone"))
	destroyed.Destroy()
	if _, err := ks.Seal(b, destroyed); !errors.Is(err, CodeSecretDestroyed) {
		t.Errorf("Seal of a destroyed secret: %v", err)
	}
	if _, err := ks.Seal(Binding{}, NewSecret([]byte("x"))); !errors.Is(err, address.CodeBindingInvalid) {
		t.Errorf("Seal at the zero binding: %v", err)
	}
	if _, err := (&Keyset{}).Seal(b, NewSecret([]byte("x"))); !errors.Is(err, CodeKeysetInvalid) {
		t.Errorf("Seal with the zero keyset: %v", err)
	}
}

func TestSealedErrorsHoldNoPlaintext(t *testing.T) {
	ks := fixedKeyset(t, 1, 1)
	b := testBinding()
	sealed, err := ks.Seal(b, newTestSecret())
	if err != nil {
		t.Fatal(err)
	}
	moved := b
	moved.Integration = "other"
	_, err = ks.Open(moved, sealed)
	if err == nil {
		t.Fatal("moved record opened")
	}
	assertNoLeak(t, "error", err.Error()+fmt.Sprintf("%+v %#v", err, err))
	assertNoLeak(t, "sealed", string(sealed)+hex.EncodeToString(sealed))
}

func TestKeysetConstruction(t *testing.T) {
	k32 := func() *Secret { return NewSecret(make([]byte, 32)) }
	bad := []struct {
		name    string
		primary uint32
		roots   map[uint32]*Secret
	}{
		{"empty", 1, nil},
		{"primary missing", 2, map[uint32]*Secret{1: k32()}},
		{"version 0", 0, map[uint32]*Secret{0: k32()}},
		{"short key", 1, map[uint32]*Secret{1: NewSecret(make([]byte, 31))}},
		{"long key", 1, map[uint32]*Secret{1: NewSecret(make([]byte, 33))}},
	}
	for _, c := range bad {
		if _, err := NewKeyset(c.primary, c.roots); !errors.Is(err, CodeKeysetInvalid) {
			t.Errorf("%s: NewKeyset error = %v, want %s", c.name, err, CodeKeysetInvalid)
		}
	}
	destroyed := k32()
	destroyed.Destroy()
	if _, err := NewKeyset(1, map[uint32]*Secret{1: destroyed}); !errors.Is(err, CodeSecretDestroyed) {
		t.Errorf("NewKeyset with a destroyed key: %v", err)
	}
	ks := GenerateKeyset()
	if ks.Primary() != 1 || fmt.Sprint(ks.Versions()) != "[1]" {
		t.Fatalf("GenerateKeyset: %s", ks)
	}
	r, err := ks.Rotate()
	if err != nil {
		t.Fatal(err)
	}
	if r.Primary() != 2 || fmt.Sprint(r.Versions()) != "[1 2]" || r.String() != "custody.Keyset(primary=2 versions=[1 2])" {
		t.Fatalf("Rotate: %s", r)
	}
	if _, err := r.Without(2); !errors.Is(err, CodeKeysetInvalid) {
		t.Errorf("Without(primary): %v", err)
	}
	if _, err := r.Without(5); !errors.Is(err, CodeKeysetInvalid) {
		t.Errorf("Without(unknown): %v", err)
	}
	w, err := r.Without(1)
	if err != nil || fmt.Sprint(w.Versions()) != "[2]" {
		t.Fatalf("Without(1) = %v, %v", w, err)
	}
	var zero Keyset
	if zero.Primary() != 0 || zero.Versions() != nil || zero.String() != "custody.Keyset(zero)" {
		t.Errorf("zero Keyset: %d %v %s", zero.Primary(), zero.Versions(), zero.String())
	}
	if _, err := zero.Rotate(); !errors.Is(err, CodeKeysetInvalid) {
		t.Errorf("zero Rotate: %v", err)
	}
}

// TestKeysetNeverPrintsKeyMaterial puts a canary root key in a keyset and
// prints the keyset every way fmt can, directly and inside another struct.
func TestKeysetNeverPrintsKeyMaterial(t *testing.T) {
	root := []byte("root-key-canary-0123456789abcdef") // 32 bytes
	ks, err := NewKeyset(1, map[uint32]*Secret{1: NewSecret(bytes.Clone(root))})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ks.Seal(testBinding(), NewSecret([]byte("x"))); err != nil { // fill the subkey cache
		t.Fatal(err)
	}
	type wrap struct{ k Keyset }
	for _, v := range []any{ks, *ks, wrap{*ks}, &wrap{*ks}} {
		for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%x", "%q"} {
			out := fmt.Sprintf(verb, v)
			for _, f := range canaryForms(root) {
				if bytes.Contains([]byte(out), []byte(f)) {
					t.Fatalf("%s of %T leaks the root key: %s", verb, v, out)
				}
			}
		}
	}
}

func TestSubkeyCacheIsBounded(t *testing.T) {
	ks := fixedKeyset(t, 1, 1)
	st := ks.state()
	for i := range maxCachedSubkeys + 10 {
		if _, err := st.aead(1, fmt.Sprintf("ns%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(*st.subkeys.Load()); n > maxCachedSubkeys {
		t.Fatalf("cache holds %d subkeys, bound is %d", n, maxCachedSubkeys)
	}
}

// TestSubkeyCacheSeparatesNamespacesAndVersions interleaves namespaces and
// key versions (with distinct root keys) through one keyset's cache, and
// checks every record with a fresh keyset that derives every subkey anew.
func TestSubkeyCacheSeparatesNamespacesAndVersions(t *testing.T) {
	roots := func() map[uint32]*Secret {
		k1, k2 := make([]byte, 32), make([]byte, 32)
		for i := range k1 {
			k1[i], k2[i] = byte(i), byte(100+i)
		}
		return map[uint32]*Secret{1: NewSecret(k1), 2: NewSecret(k2)}
	}
	mk := func(primary uint32) *Keyset {
		ks, err := NewKeyset(primary, roots())
		if err != nil {
			t.Fatal(err)
		}
		return ks
	}
	old, cached, fresh := mk(1), mk(2), mk(2)
	a := testBinding()
	b := Binding{Namespace: "other", Integration: a.Integration, Handle: a.Handle}
	oldA, err := old.Seal(a, NewSecret([]byte("v1-a")))
	if err != nil {
		t.Fatal(err)
	}
	var records [][]byte
	var at []Binding
	for _, x := range []Binding{a, b, a} {
		rec, err := cached.Seal(x, NewSecret([]byte("v2-"+x.Namespace)))
		if err != nil {
			t.Fatal(err)
		}
		records, at = append(records, rec), append(at, x)
		if _, err := cached.Open(a, oldA); err != nil { // version 1 right after version 2
			t.Fatalf("open of the version-1 record after a version-2 seal at %s: %v", x, err)
		}
	}
	for i, rec := range records {
		if _, err := fresh.Open(at[i], rec); err != nil {
			t.Fatalf("record %d sealed at %s does not open with freshly derived subkeys: %v", i, at[i], err)
		}
		if _, err := cached.Open(at[i], rec); err != nil {
			t.Fatalf("record %d sealed at %s does not open with the cached keyset: %v", i, at[i], err)
		}
	}
}

// TestADScratchUnderConcurrency seals and opens at many bindings from
// more goroutines than processors, long enough for the scheduler to
// preempt some of them mid-call, so the pooled associated-data scratch
// buffers pass between bindings all the time. Every record must open at
// its own binding with its own plaintext and be refused at a
// neighbour's.
func TestADScratchUnderConcurrency(t *testing.T) {
	if testing.Short() {
		t.Skip("runs for a second")
	}
	// One processor: a goroutine preempted mid-call hands its P, and the
	// P's pooled scratch, to the next goroutine.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	ks := GenerateKeyset()
	deadline := time.Now().Add(time.Second)
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := 0; time.Now().Before(deadline); i++ {
				// Names of different lengths, so a torn AD differs in
				// its length prefixes as well as its bytes.
				b := Binding{
					Namespace:   fmt.Sprintf("ns%d", w),
					Integration: strings.Repeat("i", 1+(i+w)%40),
					Handle:      address.NewHandle(),
				}
				want := fmt.Sprintf("secret-%d-%d", w, i)
				sealed, err := ks.Seal(b, NewSecret([]byte(want)))
				if err != nil {
					t.Error(err)
					return
				}
				opened, err := ks.Open(b, sealed)
				if err != nil {
					t.Errorf("worker %d round %d: own binding: %v", w, i, err)
					return
				}
				_ = opened.reveal(func(got []byte) error {
					if string(got) != want {
						t.Errorf("worker %d round %d: opened %q, want %q", w, i, got, want)
					}
					return nil
				})
				opened.Destroy()
				moved := b
				moved.Integration += "x"
				if _, err := ks.Open(moved, sealed); !errors.Is(err, CodeAddressMismatch) {
					t.Errorf("worker %d round %d: open at a neighbouring binding = %v, want %s", w, i, err, CodeAddressMismatch)
					return
				}
			}
		})
	}
	wg.Wait()
}
