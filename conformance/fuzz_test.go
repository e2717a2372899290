package conformance

import (
	"bytes"
	"testing"
)

// FuzzParseRecord checks the public payload parser: no panics, and on
// accepted input MarshalBinary gives back exactly the input, through the
// conversion to time.Time, FactSet and Digest.
func FuzzParseRecord(f *testing.F) {
	good := mustPayload(f, func() Record { r := goodRecord(); r.Attester = testSigner(1).KeyID(); return r }())
	f.Add(good)
	f.Add(append(bytes.Clone(good), 0))
	f.Add(good[:40])
	f.Add([]byte{1, 1, 'p', 1, 'r', 0xff})
	f.Fuzz(func(t *testing.T, payload []byte) {
		r, err := ParseRecord(payload)
		if err != nil {
			return
		}
		again, err := r.MarshalBinary()
		if err != nil {
			t.Fatalf("accepted payload does not marshal: %v", err)
		}
		if !bytes.Equal(again, payload) {
			t.Fatalf("parse-then-marshal changed the bytes:\n in  %x\n out %x", payload, again)
		}
	})
}
