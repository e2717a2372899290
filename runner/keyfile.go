package runner

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/custody"
	"github.com/checkfu/checkfu/eventlog"
	"github.com/checkfu/checkfu/internal/strictjson"
	"github.com/checkfu/checkfu/signing"
)

// keyFileHeader opens every key file; it is also the associated data
// the KeyWrapper binds the contents to, so bytes wrapped for any other
// purpose do not open as a key file.
const keyFileHeader = "checkfu-keyfile/v1\n"

// MaxKeyFileBytes bounds the key file OpenKeyFile reads: room for
// thousands of rotations, and far less than a mistaken path to a large
// file would make it read.
const MaxKeyFileBytes = 1 << 20

// keyFileContents is the plaintext of a key file: the JSON the
// KeyWrapper seals. Keys are base64 (standard, padded).
type keyFileContents struct {
	CustodyPrimary uint32            `json:"custody_primary"`
	Custody        map[string]string `json:"custody"`
	Log            string            `json:"log"`
	Token          string            `json:"token"`
	Deployment     string            `json:"deployment"` // PKCS#8 PEM
}

// A KeyFile is a KeySource kept in one file, sealed at rest by a
// KeyWrapper: the custody keyset (every version, and which seals), the
// log's master key, the token key and the deployment key. A Runner
// restarted with the same file opens the credentials and logs it wrote
// before; Rotate adds a custody key version that seals from then on,
// while every older version still opens.
//
// The file is written 0600 by an atomic rename in its directory, never
// in place, and a file group or other users may read is refused: a key
// file is as private as the keys it seals. One process writes a key file
// at a time; a KeyFile is safe for concurrent use within it. Its String
// names the path and the custody versions, never a key.
type KeyFile struct {
	_       [0]func()
	path    string
	wrapper KeyWrapper
	mu      sync.Mutex // guards contents
	// contents holds the keys behind a closure, out of reach of fmt and
	// encoders (as custody.Keyset does).
	contents func() *keyFileContents
}

var _ KeySource = (*KeyFile)(nil)

// OpenKeyFile opens the key file at path, unwrapping it with w, or, when
// nothing exists at path, creates it with fresh keys (custody version 1).
// Creation is atomic: two processes that race both end up with the keys
// of whichever wrote first. A file that is not a private regular file,
// is malformed, or does not unwrap under w is refused with
// CodeKeyFileInvalid; w's own failures are returned as they are.
func OpenKeyFile(ctx context.Context, path string, w KeyWrapper) (*KeyFile, error) {
	if w == nil {
		return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "runner: OpenKeyFile needs a KeyWrapper")
	}
	kf := &KeyFile{path: path, wrapper: w}
	c, err := kf.read(ctx)
	if errors.Is(err, fs.ErrNotExist) {
		if c, err = newKeyFileContents(); err != nil {
			return nil, err
		}
		if err = kf.write(ctx, c, true); errors.Is(err, fs.ErrExist) {
			c, err = kf.read(ctx) // another process created it first
		}
	}
	if err != nil {
		return nil, err
	}
	kf.set(c)
	return kf, nil
}

func (kf *KeyFile) set(c *keyFileContents) { kf.contents = func() *keyFileContents { return c } }

func (kf *KeyFile) get() (*keyFileContents, error) {
	if kf == nil || kf.contents == nil {
		return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "runner: the zero KeyFile holds no keys; use OpenKeyFile")
	}
	kf.mu.Lock()
	defer kf.mu.Unlock()
	return kf.contents(), nil
}

func newKeyFileContents() (*keyFileContents, error) {
	_, pemKey, err := signing.GenerateSigner(nil)
	if err != nil {
		return nil, err
	}
	return &keyFileContents{
		CustodyPrimary: 1,
		Custody:        map[string]string{"1": randomKey(custody.RootKeySize)},
		Log:            randomKey(eventlog.KeySize),
		Token:          randomKey(32),
		Deployment:     string(pemKey),
	}, nil
}

func randomKey(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return base64.StdEncoding.EncodeToString(b)
}

func (kf *KeyFile) invalid(format string, args ...any) error {
	return checkfu.Refuse(CodeKeyFileInvalid, "runner: key file %s: %s", checkfu.Quote(kf.path), fmt.Sprintf(format, args...))
}

// read reads, checks and unwraps the file. A missing file is returned
// as fs.ErrNotExist.
func (kf *KeyFile) read(ctx context.Context) (*keyFileContents, error) {
	if fi, err := os.Lstat(kf.path); err == nil && !fi.Mode().IsRegular() {
		return nil, kf.invalid("is not a regular file")
	}
	f, err := os.Open(kf.path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		return nil, kf.invalid("cannot be opened (%v)", errors.Unwrap(err))
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, kf.invalid("cannot be read (%v)", errors.Unwrap(err))
	}
	if !fi.Mode().IsRegular() {
		return nil, kf.invalid("is not a regular file")
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return nil, kf.invalid("has mode %04o; a key file is readable by its owner only (chmod 600)", perm)
	}
	raw, err := io.ReadAll(io.LimitReader(f, MaxKeyFileBytes+1))
	if err != nil {
		return nil, kf.invalid("cannot be read (%v)", err)
	}
	if len(raw) > MaxKeyFileBytes {
		return nil, kf.invalid("is larger than %d bytes", MaxKeyFileBytes)
	}
	wrapped, ok := bytes.CutPrefix(raw, []byte(keyFileHeader))
	if !ok {
		return nil, kf.invalid("does not start with %q", keyFileHeader)
	}
	plain, err := kf.wrapper.Unwrap(ctx, wrapped, []byte(keyFileHeader))
	if err != nil {
		return nil, kf.invalid("does not unwrap under the KeyWrapper's key (%v)", err)
	}
	defer clear(plain)
	var c keyFileContents
	if err := strictjson.Unmarshal(plain, &c, strictjson.Options{}); err != nil {
		return nil, kf.invalid("contents are not the key file's JSON")
	}
	if err := c.check(); err != nil {
		return nil, kf.invalid("%v", err)
	}
	return &c, nil
}

// check validates every key without building anything that holds it.
func (c *keyFileContents) check() error {
	if _, err := c.keyset(); err != nil {
		return errors.New("its custody keys are not a keyset")
	}
	if _, err := decodeKey(c.Log, eventlog.KeySize); err != nil {
		return errors.New("its log key is not a key")
	}
	if _, err := decodeKey(c.Token, 32); err != nil {
		return errors.New("its token key is not a key")
	}
	if _, err := signing.ParsePrivateKeyPEM([]byte(c.Deployment)); err != nil {
		return errors.New("its deployment key is not an Ed25519 key")
	}
	return nil
}

func decodeKey(s string, size int) ([]byte, error) {
	b, err := base64.StdEncoding.Strict().DecodeString(s)
	if err != nil || len(b) != size {
		clear(b)
		return nil, errors.New("bad key")
	}
	return b, nil
}

func (c *keyFileContents) keyset() (*custody.Keyset, error) {
	roots := make(map[uint32]*custody.Secret, len(c.Custody))
	for v, s := range c.Custody {
		n, err := strconv.ParseUint(v, 10, 32)
		if err != nil || strconv.FormatUint(n, 10) != v {
			return nil, errors.New("bad version")
		}
		k, err := decodeKey(s, custody.RootKeySize)
		if err != nil {
			return nil, err
		}
		roots[uint32(n)] = custody.NewSecret(k) // zeroes k
	}
	defer func() {
		for _, s := range roots {
			s.Destroy()
		}
	}()
	return custody.NewKeyset(c.CustodyPrimary, roots)
}

// write wraps c and writes it to a temporary file beside the key file,
// then links it into place (create: refusing to replace a file) or
// renames it over the key file.
func (kf *KeyFile) write(ctx context.Context, c *keyFileContents, create bool) error {
	plain, err := json.Marshal(c)
	if err != nil {
		return err
	}
	wrapped, err := kf.wrapper.Wrap(ctx, plain, []byte(keyFileHeader))
	clear(plain)
	if err != nil {
		return err
	}
	dir := filepath.Dir(kf.path)
	tmp, err := os.CreateTemp(dir, ".checkfu-keyfile-*")
	if err != nil {
		return kf.invalid("cannot be written (%v)", err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return kf.invalid("cannot be written (%v)", err)
	}
	_, err = tmp.Write(append([]byte(keyFileHeader), wrapped...))
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return kf.invalid("cannot be written (%v)", err)
	}
	if create {
		err = os.Link(tmp.Name(), kf.path)
		if errors.Is(err, fs.ErrExist) {
			return err
		}
	} else {
		err = os.Rename(tmp.Name(), kf.path)
	}
	if err != nil {
		return kf.invalid("cannot be written (%v)", err)
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync() // make the rename durable where the platform can
		d.Close()
	}
	return nil
}

// Rotate adds a fresh custody root key, one version above the highest,
// as the primary, and writes the file. Records sealed under older
// versions keep opening (custody.Native.Rewrap moves them to the new
// one); a Runner picks the new version up when it is next built with
// this KeyFile. The log, token and deployment keys do not change.
func (kf *KeyFile) Rotate(ctx context.Context) error {
	if _, err := kf.get(); err != nil {
		return err
	}
	kf.mu.Lock()
	defer kf.mu.Unlock()
	old := kf.contents()
	next := *old
	next.Custody = make(map[string]string, len(old.Custody)+1)
	var top uint32
	for v, k := range old.Custody {
		next.Custody[v] = k
		n, _ := strconv.ParseUint(v, 10, 32) // checked when read
		top = max(top, uint32(n))
	}
	if top == 1<<32-1 {
		return checkfu.Refuse(custody.CodeKeysetInvalid, "runner: the key file's custody versions are exhausted")
	}
	next.CustodyPrimary = top + 1
	next.Custody[strconv.FormatUint(uint64(top+1), 10)] = randomKey(custody.RootKeySize)
	if err := kf.write(ctx, &next, false); err != nil {
		return err
	}
	kf.contents = func() *keyFileContents { return &next }
	return nil
}

// Custody returns the keyset of every custody version in the file, the
// newest rotation as primary.
func (kf *KeyFile) Custody() (*custody.Keyset, error) {
	c, err := kf.get()
	if err != nil {
		return nil, err
	}
	return c.keyset()
}

// Log returns the session log's keys.
func (kf *KeyFile) Log() (*eventlog.Keys, error) {
	c, err := kf.get()
	if err != nil {
		return nil, err
	}
	k, err := decodeKey(c.Log, eventlog.KeySize)
	if err != nil {
		return nil, err
	}
	defer clear(k)
	return eventlog.NewKeys(k)
}

// Token returns the token key.
func (kf *KeyFile) Token() ([]byte, error) {
	c, err := kf.get()
	if err != nil {
		return nil, err
	}
	return decodeKey(c.Token, 32)
}

// Deployment returns the deployment key's signer.
func (kf *KeyFile) Deployment() (*signing.Signer, error) {
	c, err := kf.get()
	if err != nil {
		return nil, err
	}
	return signing.ParsePrivateKeyPEM([]byte(c.Deployment))
}

// String returns a description such as
// `runner.KeyFile("/var/lib/checkfu/keys" custody=[1 2])`; never a key.
func (kf *KeyFile) String() string {
	c, err := kf.get()
	if err != nil {
		return "runner.KeyFile(zero)"
	}
	vs := make([]int, 0, len(c.Custody))
	for v := range c.Custody {
		n, _ := strconv.Atoi(v)
		vs = append(vs, n)
	}
	slices.Sort(vs)
	return fmt.Sprintf("runner.KeyFile(%s custody=%v)", checkfu.Quote(kf.path), vs)
}

// GoString is String.
func (kf *KeyFile) GoString() string { return kf.String() }
