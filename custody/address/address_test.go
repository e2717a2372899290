package address

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestParseHandle(t *testing.T) {
	h := NewHandle()
	if p, err := ParseHandle(h.String()); err != nil || p != h {
		t.Fatalf("ParseHandle(%q) = %v, %v", h, p, err)
	}
	if NewHandle() == h {
		t.Fatal("two NewHandle calls returned the same handle")
	}
	bad := []string{
		"", "ch_", "ch_aaaaaaaaaaaaaaaaaaaaaaaaa", "ch_aaaaaaaaaaaaaaaaaaaaaaaaaaa",
		"CH_aaaaaaaaaaaaaaaaaaaaaaaaaa", "ch_AAAAAAAAAAAAAAAAAAAAAAAAAA", "ch-aaaaaaaaaaaaaaaaaaaaaaaaaa",
		"ch_aaaaaaaaaaaaaaaaaaaaaaaaa1", "ch_aaaaaaaaaaaaaaaaaaaaaaaaa=", " ch_aaaaaaaaaaaaaaaaaaaaaaaaa",
		"ch_aaaaaaaaaaaaaaaaaaaaaaaaab", // non-canonical: trailing bits set
	}
	for _, s := range bad {
		if _, err := ParseHandle(s); !errors.Is(err, CodeHandleInvalid) {
			t.Errorf("ParseHandle(%q) error = %v, want %s", s, err, CodeHandleInvalid)
		}
	}
	_, err := ParseHandle("nope")
	if want := `refused: handle_invalid: address: "nope" is not a handle (want "ch_" and 26 base32 characters)`; err == nil || err.Error() != want {
		t.Errorf("error text = %v, want %s", err, want)
	}
}

func TestHandleText(t *testing.T) {
	h := MustParseHandle("ch_abcdefghijklmnopqrstuvwxya")
	j, err := json.Marshal(struct{ H Handle }{h})
	if err != nil || string(j) != `{"H":"ch_abcdefghijklmnopqrstuvwxya"}` {
		t.Fatalf("json = %s, %v", j, err)
	}
	var back struct{ H Handle }
	if err := json.Unmarshal(j, &back); err != nil || back.H != h {
		t.Fatalf("unmarshal = %v, %v", back, err)
	}
	if err := json.Unmarshal([]byte(`{"H":"ch_x"}`), &back); !errors.Is(err, CodeHandleInvalid) {
		t.Errorf("unmarshal of a bad handle: %v", err)
	}
	if _, err := (Handle{}).MarshalText(); !errors.Is(err, CodeHandleInvalid) {
		t.Errorf("MarshalText of the zero handle: %v", err)
	}
	defer func() {
		if recover() == nil {
			t.Error("MustParseHandle did not panic")
		}
	}()
	MustParseHandle("bad")
}

func TestBindingValidate(t *testing.T) {
	h := NewHandle()
	good := []Binding{
		{"acme", "github", h}, {"A", "b", h}, {"ws_1.x-y", "deploy-token", h}, {strings.Repeat("a", 128), "x", h},
	}
	for _, b := range good {
		if err := b.Validate(); err != nil {
			t.Errorf("Validate(%q): %v", b, err)
		}
	}
	bad := []Binding{
		{}, {"acme", "github", Handle{}}, {"", "github", h}, {"acme", "", h},
		{strings.Repeat("a", 129), "x", h}, {"-acme", "x", h}, {".acme", "x", h}, {"ac me", "x", h},
		{"ac/me", "x", h}, {"acme", "git\x00hub", h}, {"acmé", "x", h}, {"acme", "x\n", h},
	}
	for _, b := range bad {
		if err := b.Validate(); !errors.Is(err, CodeBindingInvalid) {
			t.Errorf("Validate(%q) = %v, want %s", b, err, CodeBindingInvalid)
		}
	}
	err := Binding{"ac me", "x", h}.Validate()
	if want := `refused: binding_invalid: address: namespace "ac me" has ' ' at byte 2 (want A-Z a-z 0-9 . _ -, starting with a letter or digit)`; err.Error() != want {
		t.Errorf("error text = %q, want %q", err, want)
	}
	if s := (Binding{"a", "b", h}).String(); s != "a/b/"+h.String() {
		t.Errorf("String = %q", s)
	}
}

func TestBindingFromColumns(t *testing.T) {
	h := NewHandle()
	b, err := BindingFromColumns("acme", "github", h.String())
	if err != nil || b != (Binding{Namespace: "acme", Integration: "github", Handle: h}) {
		t.Fatalf("BindingFromColumns(valid row) = %v, %v", b, err)
	}
	for _, row := range [][3]string{
		{"acme", "github", "not-a-handle"},
		{"acme", "github", ""},
		{"", "github", h.String()},
		{"acme", "git hub", h.String()},
		{"acme/x", "github", h.String()},
	} {
		if _, err := BindingFromColumns(row[0], row[1], row[2]); err == nil {
			t.Errorf("BindingFromColumns(%q, %q, %q) accepted a corrupt row", row[0], row[1], row[2])
		}
	}
}
