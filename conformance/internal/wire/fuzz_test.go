package wire

import (
	"bytes"
	"testing"
)

// FuzzParse checks the payload parser's stated invariants: it never
// panics, and on accepted input encoding the result gives back exactly the
// input (parse-then-encode is the identity), so no two accepted payloads
// mean the same record.
func FuzzParse(f *testing.F) {
	good, err := Encode(func() *Record { r := sample(); return &r }())
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add(append(bytes.Clone(good), 0))
	f.Add(good[:len(good)/2])
	f.Add([]byte{})
	f.Add([]byte{1})
	f.Add(encodeUnchecked(Record{Provider: "p\xff", Revision: "r", Facts: 0xff, Label: 9, Evidence: [][DigestSize]byte{{}}}))
	f.Fuzz(func(t *testing.T, payload []byte) {
		r, err := Parse(payload)
		if err != nil {
			return
		}
		again, err := Encode(&r)
		if err != nil {
			t.Fatalf("accepted payload does not encode: %v", err)
		}
		if !bytes.Equal(again, payload) {
			t.Fatalf("parse-then-encode changed the bytes:\n in  %x\n out %x", payload, again)
		}
	})
}
