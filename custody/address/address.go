package address

import (
	"crypto/rand"
	"encoding/base32"
	"fmt"
	"strings"

	"github.com/checkfu/checkfu"
)

const (
	handlePrefix = "ch_"
	handleRandom = 16 // bytes of randomness in a handle
	// HandleLen is the length of a handle's text form: "ch_" and 26
	// characters of base32.
	HandleLen = len(handlePrefix) + 26
	// MaxNameLen is the longest namespace or integration name, in bytes.
	MaxNameLen = 128
)

// handleEncoding is lowercase RFC 4648 base32 without padding: 16 random
// bytes give exactly 26 characters.
var handleEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// A Handle is the opaque, printable name of one credential in custody, such
// as "ch_5x3v...". It is random: it carries nothing derived from the
// credential, so it may appear in events, logs, API responses and sandbox
// configuration. Holding a handle grants nothing; only the trusted plane
// can use it, at the outbound edge.
//
// The zero Handle is not a valid handle and every use of it is refused.
type Handle struct {
	s string
}

// NewHandle returns a fresh random Handle.
func NewHandle() Handle {
	var b [handleRandom]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return Handle{handlePrefix + handleEncoding.EncodeToString(b[:])}
}

// ParseHandle parses the text form of a handle: exactly "ch_" followed by
// 26 characters of lowercase base32 (a-z, 2-7) that decode canonically.
// Anything else is refused with [CodeHandleInvalid].
func ParseHandle(s string) (Handle, error) {
	if len(s) != HandleLen || !strings.HasPrefix(s, handlePrefix) {
		return Handle{}, checkfu.Refuse(CodeHandleInvalid, "address: %s is not a handle (want \"ch_\" and 26 base32 characters)", checkfu.Quote(s))
	}
	body := s[len(handlePrefix):]
	b, err := handleEncoding.DecodeString(body)
	if err != nil || len(b) != handleRandom || handleEncoding.EncodeToString(b) != body {
		return Handle{}, checkfu.Refuse(CodeHandleInvalid, "address: %s is not a handle (want \"ch_\" and 26 lowercase base32 characters)", checkfu.Quote(s))
	}
	return Handle{s}, nil
}

// MustParseHandle is like ParseHandle but panics if s is not a handle. It
// is for tests and package-level values with literal handles.
func MustParseHandle(s string) Handle {
	h, err := ParseHandle(s)
	if err != nil {
		panic(err)
	}
	return h
}

// IsZero reports whether h is the zero Handle.
func (h Handle) IsZero() bool { return h.s == "" }

// String returns the text form of h, or "" for the zero Handle.
func (h Handle) String() string { return h.s }

// MarshalText implements encoding.TextMarshaler. The zero Handle is
// refused.
func (h Handle) MarshalText() ([]byte, error) {
	if h.IsZero() {
		return nil, checkfu.Refuse(CodeHandleInvalid, "address: the zero handle has no text form")
	}
	return []byte(h.s), nil
}

// UnmarshalText implements encoding.TextUnmarshaler with [ParseHandle].
func (h *Handle) UnmarshalText(text []byte) error {
	v, err := ParseHandle(string(text))
	if err != nil {
		return err
	}
	*h = v
	return nil
}

// A Binding is the custody address of one sealed credential: the
// namespace that owns it (an account or tenant, never a workspace), the
// integration it authenticates to (such as "github"), and its handle. The
// sealed record is cryptographically bound to this exact triple: moved to
// any other Binding it fails to open.
//
// Namespace and Integration are names of 1 to 128 bytes drawn from
// A-Z a-z 0-9 . _ - and starting with a letter or digit. The zero Binding is
// invalid.
type Binding struct {
	Namespace   string
	Integration string
	Handle      Handle
}

// BindingFromColumns rebuilds the Binding that a Store row is keyed by
// from its namespace, integration and handle columns. A Store derives the
// address of every record it returns this way, from its key columns, never
// from a copy kept beside the ciphertext: that is what makes a moved row
// fail to open. An error means the row is corrupt.
func BindingFromColumns(namespace, integration, handle string) (Binding, error) {
	h, err := ParseHandle(handle)
	if err != nil {
		return Binding{}, err
	}
	b := Binding{Namespace: namespace, Integration: integration, Handle: h}
	if err := b.Validate(); err != nil {
		return Binding{}, err
	}
	return b, nil
}

// Validate returns nil when b is a well-formed binding, and otherwise a
// Refusal with [CodeBindingInvalid] that names the bad component.
func (b Binding) Validate() error {
	if validName(b.Namespace) && validName(b.Integration) && !b.Handle.IsZero() {
		return nil
	}
	return b.invalid()
}

// invalid returns the Refusal for a binding that Validate rejects, naming
// the first bad component.
func (b Binding) invalid() error {
	if err := checkName("namespace", b.Namespace); err != nil {
		return err
	}
	if err := checkName("integration", b.Integration); err != nil {
		return err
	}
	if b.Handle.IsZero() {
		return checkfu.Refuse(CodeBindingInvalid, "address: binding has no handle")
	}
	// Unreachable while validName and checkName agree; fail closed anyway.
	return checkfu.Refuse(CodeBindingInvalid, "address: binding %s is not valid", checkfu.

		// String returns "namespace/integration/handle". Names cannot contain "/",
		// so the form is unambiguous.
		Quote(b.String()))
}

func (b Binding) String() string {
	return b.Namespace + "/" + b.Integration + "/" + b.Handle.String()
}

// nameByte classifies the bytes of a namespace or integration name:
// nameAlnum may appear anywhere, namePunct anywhere but first, and zero
// nowhere.
var nameByte = func() (t [256]uint8) {
	for c := range 256 {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
			t[c] = nameAlnum
		case c == '.' || c == '_' || c == '-':
			t[c] = namePunct
		}
	}
	return t
}()

const (
	nameAlnum = 1
	namePunct = 2
)

// validName reports whether s is a valid namespace or integration name.
// It is the hot path of every seal and open: one table lookup per byte.
func validName(s string) bool {
	if s == "" || len(s) > MaxNameLen || nameByte[s[0]] != nameAlnum {
		return false
	}
	for i := 1; i < len(s); i++ {
		if nameByte[s[i]] == 0 {
			return false
		}
	}
	return true
}

// CheckNamespace returns nil when s is a valid namespace name, and
// otherwise a Refusal with [CodeBindingInvalid] that names the fault.
func CheckNamespace(s string) error { return checkName("namespace", s) }

// checkName validates a namespace or integration name.
func checkName(what, s string) error {
	if validName(s) {
		return nil
	}
	return badName(what, s)
}

// badName returns the Refusal for a name that checkName rejects, naming
// the first fault.
func badName(what, s string) error {
	if s == "" {
		return checkfu.Refuse(CodeBindingInvalid, "address: binding has an empty %s", what)
	}
	if len(s) > MaxNameLen {
		return checkfu.Refuse(CodeBindingInvalid, "address: %s %s is longer than %d bytes", what, checkfu.Quote(s), MaxNameLen)
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if nameByte[c] == nameAlnum || i > 0 && nameByte[c] == namePunct {
			continue
		}
		return checkfu.Refuse(CodeBindingInvalid, "address: %s %s has %s at byte %d (want A-Z a-z 0-9 . _ -, starting with a letter or digit)", what, checkfu.Quote(s), fmt.Sprintf("%q", c), i)
	}
	// Unreachable while checkName and nameByte agree; fail closed anyway.
	return checkfu.Refuse(CodeBindingInvalid, "address: %s %s is not a valid name", what, checkfu.

		// CompareBindings orders bindings by namespace, integration and handle,
		// comparing bytes. It is the order of custody's Store.List.
		Quote(s))
}

func CompareBindings(a, b Binding) int {
	if c := strings.Compare(a.Namespace, b.Namespace); c != 0 {
		return c
	}
	if c := strings.Compare(a.Integration, b.Integration); c != 0 {
		return c
	}
	return strings.Compare(a.Handle.s, b.Handle.s)
}
