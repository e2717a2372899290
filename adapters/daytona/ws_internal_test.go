package daytona

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

type rwc struct {
	r   io.Reader
	out bytes.Buffer
}

func (c *rwc) Read(b []byte) (int, error)  { return c.r.Read(b) }
func (c *rwc) Write(b []byte) (int, error) { return c.out.Write(b) }
func (c *rwc) Close() error                { return nil }

func TestWSRefusesMaskedFrame(t *testing.T) {
	masked := []byte{0x82, 0x83, 1, 2, 3, 4, 'a' ^ 1, 'b' ^ 2, 'c' ^ 3}
	c := &wsConn{rwc: &rwc{r: bytes.NewReader(masked)}}
	c.br = newReader(c.rwc)
	if _, err := c.next(); !errors.Is(err, CodeLogFrameInvalid) {
		t.Errorf("a masked server frame = %v, want log_frame_invalid", err)
	}
	plain := []byte{0x02, 0x01, 'a', 0x80, 0x02, 'b', 'c', 0x89, 0x00, 0x88, 0x00}
	c = &wsConn{rwc: &rwc{r: bytes.NewReader(plain)}}
	c.br = newReader(c.rwc)
	if m, err := c.next(); err != nil || string(m) != "abc" {
		t.Errorf("a fragmented message = %q, %v", m, err)
	}
	if _, err := c.next(); err != io.EOF {
		t.Errorf("after ping and close = %v, want EOF", err)
	}
}

// FuzzWSFrames: any byte stream is read without a panic, and every
// message returned is within the bound.
func FuzzWSFrames(f *testing.F) {
	f.Add([]byte{0x82, 0x03, 'a', 'b', 'c', 0x88, 0x00})
	f.Add([]byte{0x02, 0x01, 'a', 0x80, 0x02, 'b', 'c'})
	f.Add([]byte{0x82, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, data []byte) {
		c := &wsConn{rwc: &rwc{r: bytes.NewReader(data)}}
		c.br = newReader(c.rwc)
		for range 100 {
			m, err := c.next()
			if err != nil {
				return
			}
			if len(m) > maxWSMessage {
				t.Fatalf("a %d-byte message", len(m))
			}
		}
	})
}

// TestDemuxAtEveryCut: the log split into two messages at every
// position, prefixes included, demultiplexes the same.
func TestDemuxAtEveryCut(t *testing.T) {
	log := []byte("\x01\x01\x01out 1\n\x02\x02\x02err 1\n\x01\x01\x01a\x01b\x02\x02c\n\x02\x02\x02\x01\n")
	wantOut, wantErr := "out 1\na\x01b\x02\x02c\n", "err 1\n\x01\n"
	for cut := range len(log) + 1 {
		var out, errb bytes.Buffer
		d := &demux{out: &out, err: &errb}
		d.feed(log[:cut])
		d.feed(log[cut:])
		d.flush()
		if out.String() != wantOut || errb.String() != wantErr {
			t.Errorf("cut at %d: stdout %q stderr %q, want %q %q", cut, out.String(), errb.String(), wantOut, wantErr)
		}
	}
}
