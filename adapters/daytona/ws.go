package daytona

import (
	"bufio"
	"crypto/rand"
	"crypto/sha1"
	"encoding/base64"
	"encoding/binary"
	"io"
	"net/http"
	"sync"

	"github.com/checkfu/checkfu"
)

// A minimal RFC 6455 client for one purpose: reading the command-log
// stream. It sends only pong and close frames (masked, as a client
// must), reads text, binary and continuation frames, and refuses masked
// or oversized server frames.

const (
	wsGUID       = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
	maxWSMessage = 4 << 20
	opCont       = 0x0
	opText       = 0x1
	opBinary     = 0x2
	opClose      = 0x8
	opPing       = 0x9
	opPong       = 0xA
)

// wsUpgrade adds the handshake headers to req and returns the key.
func wsUpgrade(req *http.Request) string {
	var k [16]byte
	_, _ = rand.Read(k[:])
	key := base64.StdEncoding.EncodeToString(k[:])
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", "websocket")
	req.Header.Set("Sec-WebSocket-Version", "13")
	req.Header.Set("Sec-WebSocket-Key", key)
	return key
}

func wsAccept(key string) string {
	h := sha1.Sum([]byte(key + wsGUID))
	return base64.StdEncoding.EncodeToString(h[:])
}

type wsConn struct {
	rwc io.ReadWriteCloser
	br  *bufio.Reader
	wmu sync.Mutex // serialises frame writes
}

// wsOpen checks a 101 answer to the upgrade with key and returns the
// connection.
func wsOpen(resp *http.Response, key string) (*wsConn, error) {
	if resp.StatusCode != http.StatusSwitchingProtocols {
		resp.Body.Close()
		return nil, checkfu.Refuse(CodeToolboxRefused, "daytona: the log stream answered %d, not 101", resp.StatusCode)
	}
	rwc, ok := resp.Body.(io.ReadWriteCloser)
	if !ok || resp.Header.Get("Sec-WebSocket-Accept") != wsAccept(key) {
		resp.Body.Close()
		return nil, checkfu.Refuse(CodeLogFrameInvalid, "daytona: the log stream's WebSocket handshake is not RFC 6455's")
	}
	return &wsConn{rwc: rwc, br: newReader(rwc)}, nil
}

func newReader(r io.Reader) *bufio.Reader { return bufio.NewReader(r) }

// next returns the next data message; io.EOF after a close frame.
func (c *wsConn) next() ([]byte, error) {
	var msg []byte
	started := false
	for {
		fin, op, payload, err := c.frame()
		if err != nil {
			return nil, err
		}
		switch op {
		case opPing:
			if err := c.write(opPong, payload); err != nil {
				return nil, err
			}
			continue
		case opPong:
			continue
		case opClose:
			_ = c.write(opClose, nil)
			return nil, io.EOF
		case opText, opBinary:
			if started {
				return nil, checkfu.Refuse(CodeLogFrameInvalid, "daytona: a new log message began inside a fragmented one")
			}
			started = true
		case opCont:
			if !started {
				return nil, checkfu.Refuse(CodeLogFrameInvalid, "daytona: a continuation frame with no message")
			}
		default:
			return nil, checkfu.Refuse(CodeLogFrameInvalid, "daytona: WebSocket opcode %#x", op)
		}
		if len(msg)+len(payload) > maxWSMessage {
			return nil, checkfu.Refuse(CodeLogFrameInvalid, "daytona: a log message over %d bytes", maxWSMessage)
		}
		msg = append(msg, payload...)
		if fin {
			return msg, nil
		}
	}
}

func (c *wsConn) frame() (fin bool, op byte, payload []byte, err error) {
	var h [2]byte
	if _, err := io.ReadFull(c.br, h[:]); err != nil {
		return false, 0, nil, checkfu.Refuse(CodeLogFrameInvalid, "daytona: the log stream ended without a close frame")
	}
	if h[0]&0x70 != 0 {
		return false, 0, nil, checkfu.Refuse(CodeLogFrameInvalid, "daytona: a WebSocket frame sets reserved bits")
	}
	if h[1]&0x80 != 0 {
		return false, 0, nil, checkfu.Refuse(CodeLogFrameInvalid, "daytona: the server masked a frame")
	}
	fin, op = h[0]&0x80 != 0, h[0]&0x0f
	n := uint64(h[1] & 0x7f)
	switch n {
	case 126:
		var b [2]byte
		if _, err := io.ReadFull(c.br, b[:]); err != nil {
			return false, 0, nil, checkfu.Refuse(CodeLogFrameInvalid, "daytona: a cut frame header")
		}
		n = uint64(binary.BigEndian.Uint16(b[:]))
	case 127:
		var b [8]byte
		if _, err := io.ReadFull(c.br, b[:]); err != nil {
			return false, 0, nil, checkfu.Refuse(CodeLogFrameInvalid, "daytona: a cut frame header")
		}
		n = binary.BigEndian.Uint64(b[:])
	}
	if n > maxWSMessage || (op >= opClose && n > 125) {
		return false, 0, nil, checkfu.Refuse(CodeLogFrameInvalid, "daytona: a %d-byte WebSocket frame", n)
	}
	payload = make([]byte, n)
	if _, err := io.ReadFull(c.br, payload); err != nil {
		return false, 0, nil, checkfu.Refuse(CodeLogFrameInvalid, "daytona: a cut frame")
	}
	return fin, op, payload, nil
}

func (c *wsConn) write(op byte, payload []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	b := []byte{0x80 | op, 0x80 | byte(len(payload))} // control payloads are < 126
	var mask [4]byte
	_, _ = rand.Read(mask[:])
	b = append(b, mask[:]...)
	for i, x := range payload {
		b = append(b, x^mask[i%4])
	}
	_, err := c.rwc.Write(b)
	return err
}

func (c *wsConn) close() error { return c.rwc.Close() }
