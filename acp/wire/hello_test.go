package wire

import (
	"encoding/binary"
	"testing"

	"github.com/checkfu/checkfu/acp/wire/internal/frame"
)

// Anyone who can reach the listener can send a first frame. Its largest
// valid payload is a resume's 24 bytes, so a first frame claiming more is
// refused at its header: the provider never reads, or holds memory for,
// a megabyte per connection from peers that have not even named a
// process.
func TestHelloClaimingALargePayloadIsRefusedAtItsHeader(t *testing.T) {
	addr := startServer(t, &Server{Command: command("cat")})
	c, err := dialRaw(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	var hdr [frame.HeaderLen]byte
	hdr[0] = byte(frame.TypeOpen)
	binary.BigEndian.PutUint32(hdr[1:], frame.MaxPayload)
	if _, err := c.Write(hdr[:]); err != nil {
		t.Fatal(err)
	}
	// No payload follows: a provider that waits for it sends nothing
	// until its handshake deadline and then closes.
	var f frame.Frame
	if err := frame.NewDecoder(c).Decode(&f); err != nil {
		t.Fatalf("no refusal for a first frame claiming %d bytes: %v", frame.MaxPayload, err)
	}
	if f.Type != frame.TypeRefuse || f.Code != CodeProtocolError {
		t.Fatalf("got %v %q, want a protocol_error refusal", f.Type, f.Code)
	}
}
