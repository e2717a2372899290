package e2b

import (
	"bytes"
	"encoding/binary"
	"io"

	"github.com/checkfu/checkfu"
)

// The Connect protocol's envelope (connectrpc.com/docs/protocol): one
// flags byte, a big-endian uint32 length, the message. Flag 0x02 marks
// the end-of-stream message; 0x01 (compression) is never negotiated.
const (
	flagCompressed = 0x01
	flagEndStream  = 0x02
	// maxMessage bounds one envd message: a data event carries at most
	// envd's read buffer, far below this.
	maxMessage = 4 << 20
)

// envelope returns msg framed as one Connect envelope.
func envelope(flags byte, msg []byte) []byte {
	b := make([]byte, 5+len(msg))
	b[0] = flags
	binary.BigEndian.PutUint32(b[1:5], uint32(len(msg)))
	copy(b[5:], msg)
	return b
}

// readEnvelope reads one envelope from r. io.EOF means the stream ended
// cleanly between envelopes.
func readEnvelope(r io.Reader) (flags byte, msg []byte, err error) {
	var h [5]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		if err == io.EOF {
			return 0, nil, io.EOF
		}
		return 0, nil, checkfu.Refuse(CodeEnvdStreamInvalid, "e2b: envd stream cut inside an envelope header")
	}
	flags = h[0]
	n := binary.BigEndian.Uint32(h[1:5])
	if flags&^(flagEndStream) != 0 {
		return 0, nil, checkfu.Refuse(CodeEnvdStreamInvalid, "e2b: envd envelope has flags %#x (compression was not negotiated)", flags)
	}
	if n > maxMessage {
		return 0, nil, checkfu.Refuse(CodeEnvdStreamInvalid, "e2b: envd message of %d bytes (at most %d)", n, maxMessage)
	}
	var buf bytes.Buffer
	if _, err := io.CopyN(&buf, r, int64(n)); err != nil {
		return 0, nil, checkfu.Refuse(CodeEnvdStreamInvalid, "e2b: envd stream cut inside a message")
	}
	return flags, buf.Bytes(), nil
}
