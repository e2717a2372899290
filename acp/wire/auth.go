package wire

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"os"
	"time"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/signing"
)

// alpnProtocol is the TLS application protocol both sides require: it
// keeps a wire handshake from being mistaken for any other TLS use of the
// same keys.
const alpnProtocol = "checkfu-wire/1"

// Keys authenticate one side of the wire over TCP (or any connection that
// is not a Unix socket): the side's own Ed25519 private key, and the
// pinned public keys of the peers it accepts. The two sides run TLS 1.3
// with a certificate each, self-signed for the side's key; there is no
// CA: a peer is accepted when the key its certificate carries (and whose
// possession the TLS handshake proves) is one of the pinned keys, matched
// by key id ([signing.KeyID]). Certificate names,
// dates and extensions are ignored. The private key lives only inside a
// closure, so no fmt verb, slog handler or other printer that walks
// fields by reflection can reach it, even with Keys held by value in
// another struct.
type Keys struct {
	id    signing.KeyID
	cert  tls.Certificate
	peers map[signing.KeyID]bool
}

// NewKeys returns the Keys of a side holding the PKCS#8 PEM Ed25519
// private key privateKeyPEM (as "checkfu attester keygen" or "openssl
// genpkey -algorithm ed25519" writes it), accepting peers whose PKIX PEM
// public key appears in one of peersPEM (each may hold several PUBLIC
// KEY blocks; text around them is ignored). Every key must pass the
// admission rules of package signing (the same as for attester keys);
// anything else is refused with signing's code ([signing.CodeKeyInvalid],
// [signing.CodeKeySmallOrder] or [signing.CodeKeyMixedOrder]),
// and no peer at all with
// [checkfu.CodeConfigInvalid]. Errors never quote a key.
func NewKeys(privateKeyPEM []byte, peersPEM ...[]byte) (*Keys, error) {
	signer, err := signing.ParsePrivateKeyPEM(privateKeyPEM)
	if err != nil {
		return nil, err
	}
	block, _ := pem.Decode(privateKeyPEM) // signing checked it is exactly one PKCS#8 block
	key, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, checkfu.Refuse(signing.CodeKeyInvalid, "wire: private key is not PKCS#8 DER")
	}
	priv := newKeySigner(key.(ed25519.PrivateKey)) // signing checked it is Ed25519
	cert, err := selfSigned(priv)
	if err != nil {
		return nil, err
	}
	k := &Keys{id: signer.KeyID(), cert: cert, peers: map[signing.KeyID]bool{}}
	for _, data := range peersPEM {
		for {
			var b *pem.Block
			b, data = pem.Decode(data)
			if b == nil {
				break
			}
			if b.Type != "PUBLIC KEY" {
				continue
			}
			id, err := signing.KeyIDOf(pem.EncodeToMemory(b))
			if err != nil {
				return nil, err
			}
			k.peers[id] = true
		}
	}
	if len(k.peers) == 0 {
		return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "wire: no peer public key (a PEM PUBLIC KEY block) was given; pin at least one")
	}
	return k, nil
}

// GenerateKey makes a new Ed25519 key from rand (crypto/rand.Reader when
// nil) and returns its PKCS#8 PEM private key, which the caller must store
// where only this side can read it, and its PKIX PEM public key, which the
// other side pins.
func GenerateKey(rand io.Reader) (privateKeyPEM, publicKeyPEM []byte, err error) {
	signer, privateKeyPEM, err := signing.GenerateSigner(rand)
	if err != nil {
		return nil, nil, err
	}
	return privateKeyPEM, signer.PublicKeyPEM(), nil
}

// KeyID returns the key id of this side's own public key: the SHA-256 of
// its PKIX DER, as [signing.KeyID] defines it.
func (k *Keys) KeyID() signing.KeyID { return k.id }

// String returns "wire.Keys(key id ID, N pinned peers)": no key material.
func (k Keys) String() string {
	return fmt.Sprintf("wire.Keys(key id %s, %d pinned peers)", k.id, len(k.peers))
}

// keySigner is the crypto.Signer of this side's Ed25519 key. The private
// key is captured by sign and held nowhere else: printers show a func as
// an address.
type keySigner struct {
	pub  ed25519.PublicKey
	sign func(message []byte) []byte
}

func newKeySigner(priv ed25519.PrivateKey) keySigner {
	priv = bytes.Clone(priv)
	return keySigner{pub: priv.Public().(ed25519.PublicKey), sign: func(m []byte) []byte { return ed25519.Sign(priv, m) }}
}

// Public returns the Ed25519 public key.
func (s keySigner) Public() crypto.PublicKey { return s.pub }

// Sign signs message with pure Ed25519 (opts must say no hash), as
// crypto/tls and crypto/x509 ask of an Ed25519 signer.
func (s keySigner) Sign(_ io.Reader, message []byte, opts crypto.SignerOpts) ([]byte, error) {
	if opts.HashFunc() != crypto.Hash(0) {
		return nil, errors.New("wire: Ed25519 signs the message itself, not a digest")
	}
	return s.sign(message), nil
}

// selfSigned returns a TLS certificate for priv, signed by itself. Only
// its key matters to the peer.
func selfSigned(priv keySigner) (tls.Certificate, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return tls.Certificate{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		NotBefore:    time.Unix(0, 0),
		NotAfter:     time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, priv.pub, priv)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: priv}, nil
}

// tlsConfig returns the TLS configuration of one side: TLS 1.3 only, this
// side's certificate, the peer's certificate required, the peer accepted
// only by its pinned key (verifyPeer), and no session resumption. InsecureSkipVerify only
// turns off the CA chain check, which verifyPeer replaces; the handshake
// still proves the peer holds the key its certificate carries.
func (k *Keys) tlsConfig(server bool) *tls.Config {
	cfg := &tls.Config{
		MinVersion:       tls.VersionTLS13,
		MaxVersion:       tls.VersionTLS13,
		Certificates:     []tls.Certificate{k.cert},
		NextProtos:       []string{alpnProtocol},
		VerifyConnection: k.verifyPeer,
		// No session tickets, so no resumption: every connection proves
		// its key with a full handshake. (Go would re-run verifyPeer on a
		// resumed session, but a ticket is a credential not worth issuing.)
		SessionTicketsDisabled: true,
	}
	if server {
		cfg.ClientAuth = tls.RequireAnyClientCert
	} else {
		cfg.InsecureSkipVerify = true
		cfg.ServerName = "checkfu-wire"
	}
	return cfg
}

// verifyPeer accepts a connection whose peer presented exactly one
// certificate carrying an Ed25519 key pinned in k, over TLS 1.3 with the
// wire's application protocol.
func (k *Keys) verifyPeer(cs tls.ConnectionState) error {
	if cs.Version != tls.VersionTLS13 || cs.NegotiatedProtocol != alpnProtocol {
		return checkfu.Refuse(CodePeerRefused, "wire: the peer does not speak %s over TLS 1.3", alpnProtocol)
	}
	if len(cs.PeerCertificates) != 1 {
		return checkfu.Refuse(CodePeerRefused, "wire: the peer presented %d certificates, want exactly one", len(cs.PeerCertificates))
	}
	spki := cs.PeerCertificates[0].RawSubjectPublicKeyInfo
	id, err := signing.KeyIDOf(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: spki}))
	if err != nil {
		return checkfu.Refuse(CodePeerRefused, "wire: the peer's key is not an admissible Ed25519 key")
	}
	if !k.peers[id] {
		return checkfu.Refuse(CodePeerRefused, "wire: the peer's key %s is not pinned", id)
	}
	return nil
}

// authServer authenticates an accepted connection before its first frame:
// over a Unix socket by the peer's uid, otherwise by TLS with s.Keys. It
// returns the connection to speak the wire on.
func (s *Server) authServer(c net.Conn) (net.Conn, error) {
	if s.InsecureNoAuth {
		return c, nil
	}
	if isUnix(c) {
		return c, checkPeerUID(c)
	}
	if s.Keys == nil {
		return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "wire: a connection over %s needs Server.Keys (or InsecureNoAuth)", c.LocalAddr().Network())
	}
	tc := tls.Server(c, s.Keys.tlsConfig(true))
	if err := tc.Handshake(); err != nil {
		return nil, err
	}
	return tc, nil
}

// authRunner authenticates a dialled connection before the first frame,
// the Runner's side of authServer.
func (r *Runner) authRunner(ctx context.Context, c net.Conn) (net.Conn, error) {
	if r.InsecureNoAuth {
		return c, nil
	}
	if isUnix(c) {
		return c, checkPeerUID(c)
	}
	if r.Keys == nil {
		// Not checkAuthConfig: a wrapped Unix-socket connection says
		// "unix" but offers no SO_PEERCRED, so it needs Keys too.
		return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "wire: Runner.Keys is nil; set it to authenticate the provider over %s (only a *net.UnixConn is authenticated by its uid; InsecureNoAuth speaks to anyone)", c.LocalAddr().Network())
	}
	tc := tls.Client(c, r.Keys.tlsConfig(false))
	hctx, cancel := context.WithTimeout(ctx, handshakeTimeout)
	defer cancel()
	if err := tc.HandshakeContext(hctx); err != nil {
		var refusal *checkfu.Refusal
		switch {
		case errors.As(err, &refusal):
			return nil, refusal
		case refusedByPeer(err):
			return nil, checkfu.Refuse(CodePeerRefused, "wire: the provider refused the handshake (%v)", err)
		}
		return nil, err
	}
	return tc, nil
}

// refusedByPeer reports whether err is a TLS alert received from the
// peer (crypto/tls reports one as a *net.OpError with Op "remote error"):
// before the first frame, that is the peer refusing this side's key or
// protocol, not a drop.
func refusedByPeer(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "remote error"
}

// checkAuthConfig refuses an authentication configuration that can serve
// or reach no peer: neither Keys nor InsecureNoAuth for a network that is
// not a Unix socket.
func checkAuthConfig(keys *Keys, insecure bool, network, who string) error {
	if insecure || keys != nil || network == "unix" {
		return nil
	}
	return checkfu.Refuse(checkfu.CodeConfigInvalid, "wire: %s.Keys is nil; set it to authenticate peers over %s (InsecureNoAuth serves anyone who connects)", who, network)
}

func isUnix(c net.Conn) bool {
	_, ok := c.(*net.UnixConn)
	return ok
}

// Listen listens on network ("tcp", "tcp4", "tcp6" or "unix") and address
// as net.Listen does, except that a Unix socket is created with mode 0600
// whatever the process's umask, so only its owner (and root) can connect.
func Listen(network, address string) (net.Listener, error) {
	if network != "unix" {
		return net.Listen(network, address)
	}
	return listenUnix(address)
}

// peerUIDMatches reports whether uid may speak the wire with this
// process: only the same user.
func peerUIDMatches(uid uint32) bool { return uid == uint32(os.Getuid()) }
