package wire_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/checkfu/checkfu/acp/wire"
)

// NewDecoder reads one frame after another; a stream that ends between
// frames is io.EOF, inside one io.ErrUnexpectedEOF, and a malformed frame
// is refused with wire.CodeProtocolError.
func ExampleNewDecoder() {
	ack, _ := wire.AppendFrame(nil, &wire.Frame{Type: wire.TypeAck, Offset: 4096})
	d := wire.NewDecoder(bytes.NewReader(ack))
	var f wire.Frame
	fmt.Println(d.Decode(&f), f.Type, f.Offset)
	fmt.Println(d.Decode(&f) == io.EOF)

	d = wire.NewDecoder(bytes.NewReader(ack[:7]))
	fmt.Println(d.Decode(&f) == io.ErrUnexpectedEOF)

	// A header claiming more than MaxPayload is refused before any of
	// the payload is read or buffered.
	huge := []byte{byte(wire.TypeStdout), 0, 0, 0, 0}
	binary.BigEndian.PutUint32(huge[1:], wire.MaxPayload+1)
	d = wire.NewDecoder(bytes.NewReader(huge))
	err := d.Decode(&f)
	fmt.Println(errors.Is(err, wire.CodeProtocolError))
	// Output:
	// <nil> ack 4096
	// true
	// true
	// true
}

// ParseFrame decodes a payload that was framed by other means (a
// message-oriented transport, say) and is strict about its length.
func ExampleParseFrame() {
	payload := binary.BigEndian.AppendUint64(nil, 10) // offset
	payload = append(payload, "hello"...)
	var f wire.Frame
	if err := wire.ParseFrame(&f, wire.TypeStdin, payload); err != nil {
		panic(err)
	}
	fmt.Printf("%v offset %d %q\n", f.Type, f.Offset, f.Data)

	// An ack is exactly one offset: a longer payload is malformed.
	err := wire.ParseFrame(&f, wire.TypeAck, payload)
	fmt.Println(errors.Is(err, wire.CodeProtocolError))
	fmt.Println(err)
	// Output:
	// stdin offset 10 "hello"
	// true
	// refused: protocol_error: wire: malformed ack frame (13 payload bytes)
}

func ExampleType_String() {
	fmt.Println(wire.TypeStdout, wire.TypeRefuse, wire.Type(99))
	// Output: stdout refuse type(99)
}
