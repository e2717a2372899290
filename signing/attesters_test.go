package signing

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/checkfu/checkfu"
)

// The mutants of these checks are in mutants_test.go.
func TestParseAttesterSetRefusals(t *testing.T) {
	a, b := testSigner(1), testSigner(2)
	apem, bpem := string(a.PublicKeyPEM()), string(b.PublicKeyPEM())
	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ecDER, _ := x509.MarshalPKIXPublicKey(&ecKey.PublicKey)
	ecPEM := string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: ecDER}))
	block, _ := pem.Decode([]byte(apem))
	// A BIT STRING with one unused bit: crypto/x509 accepts it (shifting
	// the key right by one bit), and it does not re-encode.
	longDER := append([]byte(nil), block.Bytes...)
	longDER[11] = 1
	longPEM := string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: longDER}))
	nonCanonicalPoint := rawKeyPEM(t, mustHex(t, "eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f"))

	tests := []struct {
		name string
		json string
		want checkfu.Code
		msg  string
	}{
		{"duplicate name", string(setJSON(entry{Name: "x", PublicKeyPEM: apem}, entry{Name: "x", PublicKeyPEM: bpem})), CodeAttesterDuplicate, ""},
		{"duplicate key", string(setJSON(entry{Name: "x", PublicKeyPEM: apem}, entry{Name: "y", PublicKeyPEM: apem})), CodeAttesterDuplicate, ""},
		{"duplicate key, other PEM spacing", string(setJSON(entry{Name: "x", PublicKeyPEM: apem}, entry{Name: "y", PublicKeyPEM: "\n" + apem + "\n\n"})), CodeAttesterDuplicate, ""},
		{"empty name", string(setJSON(entry{Name: "", PublicKeyPEM: apem})), CodeAttesterSetInvalid, ""},
		{"control in name", string(setJSON(entry{Name: "a\nb", PublicKeyPEM: apem})), CodeAttesterSetInvalid, ""},
		{"not PEM", string(setJSON(entry{Name: "x", PublicKeyPEM: "hello"})), CodeKeyInvalid, ""},
		{"private key block", string(setJSON(entry{Name: "x", PublicKeyPEM: strings.ReplaceAll(apem, "PUBLIC", "PRIVATE")})), CodeKeyInvalid, ""},
		{"PEM headers", string(setJSON(entry{Name: "x", PublicKeyPEM: strings.Replace(apem, "-----\n", "-----\nProc-Type: 4,ENCRYPTED\n\n", 1)})), CodeKeyInvalid, "has headers"},
		{"two PEM blocks", string(setJSON(entry{Name: "x", PublicKeyPEM: apem + bpem})), CodeKeyInvalid, "data after its PEM block"},
		{"CRLF PEM", string(setJSON(entry{Name: "x", PublicKeyPEM: strings.ReplaceAll(apem, "\n", "\r\n")})), CodeKeyInvalid, "re-encode"},
		{"ECDSA key", string(setJSON(entry{Name: "x", PublicKeyPEM: ecPEM})), CodeKeyInvalid, ""},
		{"DER does not re-encode", string(setJSON(entry{Name: "x", PublicKeyPEM: longPEM})), CodeKeyInvalid, "DER does not re-encode"},
		{"non-canonical point", string(setJSON(entry{Name: "x", PublicKeyPEM: nonCanonicalPoint})), CodeKeyInvalid, ""},
		{"small-order point", string(setJSON(entry{Name: "x", PublicKeyPEM: rawKeyPEM(t, make([]byte, 32))})), CodeKeySmallOrder, ""},
		{"mixed-order point", string(setJSON(entry{Name: "x", PublicKeyPEM: rawKeyPEM(t, mustHex(t, "cdb267ce40c5cd45306fa5d2f29731459387dbf9eb933b7bd5aed9a765b88d4d"))})), CodeKeyMixedOrder, ""},
		{"good then bad", string(setJSON(entry{Name: "x", PublicKeyPEM: apem}, entry{Name: "y", PublicKeyPEM: rawKeyPEM(t, make([]byte, 32))})), CodeKeySmallOrder, ""},
		{"not JSON", "{", CodeAttesterSetInvalid, ""},
		{"unknown field", `{"attesters":[],"trust_all":true}`, CodeAttesterSetInvalid, ""},
		{"key case", `{"Attesters":[]}`, CodeAttesterSetInvalid, ""},
		{"duplicate top key", `{"attesters":[],"attesters":[]}`, CodeAttesterSetInvalid, ""},
		{"trailing data", `{"attesters":[]} {}`, CodeAttesterSetInvalid, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := ParseAttesterSet([]byte(tt.json))
			if s != nil || !errors.Is(err, tt.want) {
				t.Fatalf("ParseAttesterSet = %v, %v; want %s", s, err, tt.want)
			}
			if !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("error %q does not mention %q", err, tt.msg)
			}
		})
	}
	// The PEM with surrounding whitespace is the same key, accepted alone.
	s, err := ParseAttesterSet(setJSON(entry{Name: "x", PublicKeyPEM: "\n" + apem + "\n"}, entry{Name: "y", PublicKeyPEM: bpem}))
	if err != nil || s.Len() != 2 {
		t.Fatalf("good set: %v, %v", s, err)
	}
	got := s.Attesters()
	if got[0].Name != "x" || got[0].KeyID != a.KeyID() || got[1].KeyID != b.KeyID() {
		t.Fatalf("Attesters = %+v", got)
	}
}

func TestEmptyAttesterSet(t *testing.T) {
	var none *AttesterSet
	if n := none.Len(); n != 0 {
		t.Fatalf("nil set has %d attesters, want 0", n)
	}
	if _, _, err := none.VerifyPayload(mustSign(t, testSigner(1), []byte("x")), testType); !errors.Is(err, CodeAttesterUnknown) {
		t.Fatalf("nil set VerifyPayload = %v, want %s", err, CodeAttesterUnknown)
	}
	empty, err := ParseAttesterSet([]byte(`{"attesters":[]}`))
	if err != nil || empty.Len() != 0 {
		t.Fatalf("empty set file: %v, %v", empty, err)
	}
}

// TestOpenSSLKeys signs with a key made by `openssl genpkey -algorithm
// ed25519` and verifies with its `openssl pkey -pubout` public key, and
// checks the key id equals the SHA-256 of openssl's DER public key.
func TestOpenSSLKeys(t *testing.T) {
	openssl, err := exec.LookPath("openssl")
	if err != nil {
		t.Skip("openssl not installed")
	}
	dir := t.TempDir()
	keyPath, pubPath, derPath := filepath.Join(dir, "key.pem"), filepath.Join(dir, "pub.pem"), filepath.Join(dir, "pub.der")
	run := func(args ...string) {
		t.Helper()
		if out, err := exec.Command(openssl, args...).CombinedOutput(); err != nil {
			t.Fatalf("openssl %v: %v\n%s", args, err, out)
		}
	}
	run("genpkey", "-algorithm", "ed25519", "-out", keyPath)
	run("pkey", "-in", keyPath, "-pubout", "-out", pubPath)
	run("pkey", "-in", keyPath, "-pubout", "-outform", "DER", "-out", derPath)
	signer, err := LoadSigner(keyPath)
	if err != nil {
		t.Fatalf("LoadSigner(openssl key) = %v", err)
	}
	pubPEM, err := os.ReadFile(pubPath)
	if err != nil {
		t.Fatal(err)
	}
	if string(pubPEM) != string(signer.PublicKeyPEM()) {
		t.Fatalf("openssl public key\n%s\ndiffers from ours\n%s", pubPEM, signer.PublicKeyPEM())
	}
	der, _ := os.ReadFile(derPath)
	if id := KeyID(sha256.Sum256(der)); id != signer.KeyID() {
		t.Fatalf("key id %s, want sha256(openssl DER) = %s", signer.KeyID(), id)
	}
	setPath := filepath.Join(dir, "set.json")
	if err := os.WriteFile(setPath, setJSON(entry{Name: "openssl", PublicKeyPEM: string(pubPEM)}), 0o644); err != nil {
		t.Fatal(err)
	}
	set, err := LoadAttesterSet(setPath)
	if err != nil {
		t.Fatalf("LoadAttesterSet(openssl key) = %v", err)
	}
	if _, _, err := set.VerifyPayload(mustSign(t, signer, []byte("hello")), testType); err != nil {
		t.Fatalf("envelope signed with the openssl key: %v", err)
	}
}

func TestPrivateKeyRefusals(t *testing.T) {
	_, privPEM, err := GenerateSigner(nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ParsePrivateKeyPEM(privPEM); err != nil {
		t.Fatalf("ParsePrivateKeyPEM(generated) = %v", err)
	}
	secretLine := strings.Split(string(privPEM), "\n")[1]
	block, _ := pem.Decode(privPEM)
	// OneAsymmetricKey v2 carrying a public key (zeros, not the seed's):
	// crypto/x509 ignores the public key; admission refuses the bytes.
	v2 := append([]byte(nil), block.Bytes...)
	v2[4] = 1
	v2 = append(v2, append([]byte{0x81, 0x21, 0x00}, make([]byte, 32)...)...)
	v2[1] = byte(len(v2) - 2)
	v2PEM := string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: v2}))
	for name, in := range map[string]string{
		"public key":         string(testSigner(1).PublicKeyPEM()),
		"garbage body":       "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n",
		"CRLF":               strings.ReplaceAll(string(privPEM), "\n", "\r\n"),
		"trailing":           string(privPEM) + "x",
		"v2 with public key": v2PEM,
	} {
		_, err := ParsePrivateKeyPEM([]byte(in))
		if !errors.Is(err, CodeKeyInvalid) {
			t.Errorf("%s: %v, want %s", name, err, CodeKeyInvalid)
		}
		if err != nil && strings.Contains(err.Error(), secretLine) {
			t.Errorf("%s: error quotes the private key", name)
		}
	}
	var zero Signer
	if _, err := zero.SignPayload(testType, []byte("x")); !errors.Is(err, CodeKeyInvalid) {
		t.Fatalf("zero Signer.SignPayload = %v", err)
	}
}

func TestSignerDoesNotPrintKey(t *testing.T) {
	s, privPEM, err := GenerateSigner(nil)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(privPEM)
	key, _ := x509.ParsePKCS8PrivateKey(block.Bytes)
	seed := key.(interface{ Seed() []byte }).Seed()
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%x", "%q"} {
		out := fmt.Sprintf(verb, s) + fmt.Sprintf(verb, *s)
		if strings.Contains(out, string(seed)) || strings.Contains(out, hex.EncodeToString(seed)) {
			t.Fatalf("fmt %s of a Signer shows the private key", verb)
		}
	}
}
