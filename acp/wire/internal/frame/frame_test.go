package frame

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var sampleFrames = []Frame{
	{Type: TypeOpen, ID: ProcessID{1, 2}, Version: ProtocolVersion},
	{Type: TypeResume, ID: ProcessID{3}, Offset: 1 << 40},
	{Type: TypeAttached, ID: ProcessID{4}, Accepted: 10, Limit: 20, Window: 30, Low: 40, Head: 50, StdinEnded: true},
	{Type: TypeRefuse, Offset: 7, Code: "input_buffer_full", Message: "resend"},
	{Type: TypeWindow, Accepted: 5, Limit: 1 << 20},
	{Type: TypeStdin, Offset: 99, Data: []byte("in")},
	{Type: TypeStdinEnd, Offset: 101},
	{Type: TypeStdout, Offset: 0, Data: []byte("out")},
	{Type: TypeStderr, Offset: 3, Dropped: 2, Data: []byte("err")},
	{Type: TypeOutEnd, Offset: 3},
	{Type: TypeErrEnd, Offset: 6, Dropped: 2},
	{Type: TypeExit, Status: -1},
	{Type: TypeAck, Offset: 3},
	{Type: TypeDone},
	{Type: TypeKill},
}

func TestFrameRoundTrip(t *testing.T) {
	var stream []byte
	for i := range sampleFrames {
		var err error
		if stream, err = Append(stream, &sampleFrames[i]); err != nil {
			t.Fatalf("Append(%v): %v", sampleFrames[i].Type, err)
		}
	}
	d := NewDecoder(bytes.NewReader(stream))
	for _, want := range sampleFrames {
		var got Frame
		if err := d.Decode(&got); err != nil {
			t.Fatalf("Decode: %v", err)
		}
		if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b []byte) bool { return bytes.Equal(a, b) })); diff != "" {
			t.Errorf("%v round trip (-want +got):\n%s", want.Type, diff)
		}
	}
	var f Frame
	if err := d.Decode(&f); err != io.EOF {
		t.Fatalf("Decode at end = %v, want io.EOF", err)
	}
}

func TestDecodeRejects(t *testing.T) {
	tests := []struct {
		name  string
		input []byte
		want  error
	}{
		{"unknown type", []byte{99, 0, 0, 0, 0}, CodeProtocolError},
		{"claim over max", []byte{byte(TypeStdout), 0x7f, 0xff, 0xff, 0xff}, CodeProtocolError},
		{"short fixed field", []byte{byte(TypeAck), 0, 0, 0, 4, 1, 2, 3, 4}, CodeProtocolError},
		{"trailing bytes", []byte{byte(TypeDone), 0, 0, 0, 1, 0}, CodeProtocolError},
		{"bad bool", append([]byte{byte(TypeAttached), 0, 0, 0, 57}, append(make([]byte, 56), 2)...), CodeProtocolError},
		{"empty refusal code", append([]byte{byte(TypeRefuse), 0, 0, 0, 9}, make([]byte, 9)...), CodeProtocolError},
		{"truncated payload", []byte{byte(TypeStdout), 0, 0, 0, 20, 1, 2}, io.ErrUnexpectedEOF},
		{"truncated header", []byte{byte(TypeStdout), 0}, io.ErrUnexpectedEOF},
	}
	for _, tt := range tests {
		var f Frame
		err := NewDecoder(bytes.NewReader(tt.input)).Decode(&f)
		if !errors.Is(err, tt.want) {
			t.Errorf("%s: Decode = %v, want %v", tt.name, err, tt.want)
		}
	}
}

// A frame claiming MaxPayload bytes of which only a few arrive must not
// make the decoder allocate the claimed length.
func TestDecodeAllocatesOnlyWhatArrives(t *testing.T) {
	hdr := []byte{byte(TypeStdout), 0, 0, 0, 0}
	binary.BigEndian.PutUint32(hdr[1:], MaxPayload)
	d := NewDecoder(io.MultiReader(bytes.NewReader(hdr), bytes.NewReader(make([]byte, 100))))
	var f Frame
	if err := d.Decode(&f); err != io.ErrUnexpectedEOF {
		t.Fatalf("Decode = %v, want io.ErrUnexpectedEOF", err)
	}
	if cap(d.buf) > readChunk {
		t.Fatalf("decoder buffer grew to %d bytes for 100 arrived bytes", cap(d.buf))
	}
}

func TestAppendFrameRejects(t *testing.T) {
	for _, f := range []Frame{
		{Type: 0},
		{Type: TypeStdout, Data: make([]byte, MaxPayload)},
		{Type: TypeRefuse},
		{Type: TypeRefuse, Code: "x", Message: string(make([]byte, MaxRefusalMessage+1))},
	} {
		if _, err := Append(nil, &f); !errors.Is(err, CodeProtocolError) {
			t.Errorf("Append(%v, %d data bytes) = %v, want protocol_error", f.Type, len(f.Data), err)
		}
	}
}

// countingReader counts the bytes handed out.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// FuzzDecode: no panic; every decoded frame re-encodes to bytes that
// decode to the same frame; the buffer never outgrows what has arrived
// (plus one read chunk, doubled by append's growth).
func FuzzDecode(f *testing.F) {
	for i := range sampleFrames {
		b, _ := Append(nil, &sampleFrames[i])
		f.Add(b)
	}
	f.Add([]byte{byte(TypeStdout), 0x00, 0x10, 0x00, 0x00, 1, 2, 3})
	f.Add([]byte{byte(TypeRefuse), 0, 0, 0, 10, 0, 0, 0, 0, 0, 0, 0, 0, 1, 'x'})
	f.Fuzz(func(t *testing.T, data []byte) {
		cr := &countingReader{r: bytes.NewReader(data)}
		d := NewDecoder(cr)
		for {
			var fr Frame
			err := d.Decode(&fr)
			if cap(d.buf) > 2*cr.n+2*readChunk {
				t.Fatalf("decoder holds %d bytes after %d arrived", cap(d.buf), cr.n)
			}
			if err != nil {
				return
			}
			enc, err := Append(nil, &fr)
			if err != nil {
				t.Fatalf("decoded %v does not re-encode: %v", fr.Type, err)
			}
			var again Frame
			if err := NewDecoder(bytes.NewReader(enc)).Decode(&again); err != nil {
				t.Fatalf("re-encoded %v does not decode: %v", fr.Type, err)
			}
			if !bytes.Equal(again.Data, fr.Data) {
				t.Fatalf("%v data changed in a round trip", fr.Type)
			}
			if !cmp.Equal(again, fr, cmp.Comparer(func(a, b []byte) bool { return bytes.Equal(a, b) })) {
				t.Fatalf("round trip changed %+v into %+v", fr, again)
			}
		}
	})
}

// A refusal code outside [a-z][a-z0-9_]* does not decode.
func TestRefusalCodeForm(t *testing.T) {
	for _, code := range []string{"Output_truncated", "x\n", "_x", "9x", "a b"} {
		b := []byte{byte(TypeRefuse), 0, 0, 0, byte(9 + len(code)), 0, 0, 0, 0, 0, 0, 0, 0, byte(len(code))}
		b = append(b, code...)
		var f Frame
		if err := NewDecoder(bytes.NewReader(b)).Decode(&f); err == nil {
			t.Errorf("refusal code %q decoded", code)
		}
	}
}
