package acp

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"

	"github.com/checkfu/checkfu"
)

// An ID is a JSON-RPC request id: a string, an integer, or null. The zero
// ID is "absent" (a notification). IDs compare with ==.
type ID struct {
	raw string // canonical JSON text; "" when absent
}

// IntID returns the integer ID n.
func IntID(n int64) ID { return ID{raw: strconv.FormatInt(n, 10)} }

// StringID returns the string ID s.
func StringID(s string) ID {
	b, _ := json.Marshal(s)
	return ID{raw: string(b)}
}

// IsZero reports whether id is absent.
func (id ID) IsZero() bool { return id.raw == "" }

// String returns the JSON text of id, or "" when it is absent.
func (id ID) String() string { return id.raw }

// MarshalJSON returns the JSON text of id; an absent ID marshals as null.
func (id ID) MarshalJSON() ([]byte, error) {
	if id.raw == "" {
		return []byte("null"), nil
	}
	return []byte(id.raw), nil
}

// UnmarshalJSON accepts a string, an integer or null, and nothing else.
func (id *ID) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case len(b) == 0:
		return checkfu.Refuse(CodeMessageInvalid, "acp: empty id")
	case b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return checkfu.Refuse(CodeMessageInvalid, "acp: id %s is not a string", checkfu.Quote(string(b)))
		}
		*id = StringID(s)
	case string(b) == "null":
		*id = ID{raw: "null"}
	default:
		n, err := strconv.ParseInt(string(b), 10, 64)
		if err != nil {
			return checkfu.Refuse(CodeMessageInvalid, "acp: id %s is not a string, an integer or null", checkfu.Quote(string(b)))
		}
		*id = IntID(n)
	}
	return nil
}

// A Message is one JSON-RPC 2.0 message: a request (Method and ID), a
// notification (Method, no ID) or a response (ID and exactly one of Result
// and Error). Requests from the agent and responses to the client share
// one id space on the wire but never collide here: a message with a Method
// is never taken for a response, whatever its ID.
type Message struct {
	ID     ID
	Method string
	Params json.RawMessage
	Result json.RawMessage
	Error  *RPCError
}

// IsRequest reports whether m is a request (it has a method and an id).
func (m *Message) IsRequest() bool { return m.Method != "" && !m.ID.IsZero() }

// IsNotification reports whether m is a notification (a method, no id).
func (m *Message) IsNotification() bool { return m.Method != "" && m.ID.IsZero() }

// IsResponse reports whether m is a response (no method).
func (m *Message) IsResponse() bool { return m.Method == "" }

// wireMessage is the JSON shape of a Message.
type wireMessage struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *wireError      `json:"error,omitempty"`
}

type wireError struct {
	Code    *int            `json:"code"`
	Message *string         `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// MarshalJSON encodes m with "jsonrpc":"2.0".
func (m Message) MarshalJSON() ([]byte, error) {
	w := wireMessage{JSONRPC: "2.0", Method: m.Method, Params: m.Params, Result: m.Result}
	if !m.ID.IsZero() {
		w.ID = json.RawMessage(m.ID.raw)
	}
	if m.Error != nil {
		code, msg := m.Error.Code, m.Error.Message
		w.Error = &wireError{Code: &code, Message: &msg, Data: m.Error.Data}
	}
	if m.IsResponse() && w.ID == nil {
		w.ID = json.RawMessage("null")
	}
	if m.IsResponse() && m.Error == nil && len(m.Result) == 0 {
		w.Result = json.RawMessage("null")
	}
	return json.Marshal(w)
}

// ParseLine decodes one line into its messages, appending them to dst: one
// message for a JSON object, one per element for a JSON array (a batch).
// Anything else, an empty batch or one of more than [MaxBatchMessages]
// messages, a line that is not valid UTF-8 or breaks
// another strict JSON rule (a repeated member name at any depth, an
// unpaired surrogate escape, nesting deeper than 64), or a member that
// breaks JSON-RPC 2.0 is a *checkfu.Refusal with code
// [CodeMessageInvalid]. Unknown or miscased members of a message or its
// error object are refused (the JSON-RPC 2.0 object has a closed set of
// members).
func ParseLine(dst []Message, line []byte) ([]Message, error) {
	line = trimSpace(line)
	if len(line) == 0 {
		return dst, checkfu.Refuse(CodeMessageInvalid, "acp: empty line")
	}
	// ACP is UTF-8. encoding/json would keep invalid bytes verbatim in
	// Params and Result, and a reader of the same line that replaces them
	// would see another message.
	if i := invalidUTF8(line); i >= 0 {
		return dst, checkfu.Refuse(CodeMessageInvalid, "acp: line is not valid UTF-8 at byte %d", i)
	}
	switch line[0] {
	case '{':
		var w wireMessage
		if err := decodeOne(line, &w); err != nil {
			return dst, strictRefusal(line, err)
		}
		if err := checkStrict(line); err != nil {
			return dst, strictRefusal(line, err)
		}
		m, err := fromWire(&w)
		if err != nil {
			return dst, err
		}
		return append(dst, m), nil
	case '[':
		// Counted before anything is decoded: each message costs about
		// 150 bytes decoded, some 5 times its size on the line.
		if !json.Valid(line) {
			return dst, strictRefusal(line, errScan)
		}
		if n := batchLen(line); n > MaxBatchMessages {
			return dst, checkfu.Refuse(CodeMessageInvalid, "acp: batch of %d messages, more than the maximum of %d", n, MaxBatchMessages)
		}
		if err := checkStrict(line); err != nil {
			return dst, strictRefusal(line, err)
		}
		var elems []json.RawMessage
		if err := json.Unmarshal(line, &elems); err != nil {
			return dst, strictRefusal(line, err)
		}
		if len(elems) == 0 {
			return dst, checkfu.Refuse(CodeMessageInvalid, "acp: empty batch")
		}
		n := len(dst)
		for i, e := range elems {
			if len(e) == 0 || e[0] != '{' {
				return dst[:n], checkfu.Refuse(CodeMessageInvalid, "acp: batch element %d is not an object", i)
			}
			var w wireMessage
			if err := decodeOne(e, &w); err != nil {
				return dst[:n], strictRefusal(line, err)
			}
			m, err := fromWire(&w)
			if err != nil {
				return dst[:n], err
			}
			dst = append(dst, m)
		}
		return dst, nil
	default:
		return dst, checkfu.Refuse(CodeMessageInvalid, "acp: line starts with %s, want a JSON object or array", checkfu.Quote(string(line[:1])))
	}
}

// MaxBatchMessages bounds the messages of one batch line. ACP agents send
// one message per line; a batch (a draft of the protocol) holding more is
// refused with [CodeMessageInvalid] before any of it is decoded.
const MaxBatchMessages = 1024

// batchLen counts the elements of the valid JSON array b without
// decoding them.
func batchLen(b []byte) int {
	s := scanner{b: b}
	s.space()
	s.i++ // [
	for n := 0; ; n++ {
		s.space()
		if s.i >= len(s.b) || s.b[s.i] == ']' {
			return n
		}
		if s.b[s.i] == ',' {
			s.i++
			s.space()
		}
		if s.value(1, anyShape) != nil {
			return n
		}
	}
}

// fromWire checks the JSON-RPC 2.0 rules on a decoded message and returns
// it as a Message.
func fromWire(w *wireMessage) (Message, error) {
	if w.JSONRPC != "2.0" {
		return Message{}, checkfu.Refuse(CodeMessageInvalid, "acp: jsonrpc is %s, want \"2.0\"", checkfu.Quote(w.JSONRPC))
	}
	m := Message{Method: w.Method, Params: nullIsAbsent(w.Params), Result: w.Result}
	if w.ID != nil {
		if err := m.ID.UnmarshalJSON(w.ID); err != nil {
			return Message{}, err
		}
	}
	if m.Method != "" {
		if w.Result != nil || w.Error != nil {
			return Message{}, checkfu.Refuse(CodeMessageInvalid, "acp: request %s carries a result or an error", checkfu.Quote(m.Method))
		}
		if m.ID.raw == "null" {
			return Message{}, checkfu.Refuse(CodeMessageInvalid, "acp: request %s has a null id", checkfu.Quote(m.Method))
		}
		return m, nil
	}
	if w.ID == nil {
		return Message{}, checkfu.Refuse(CodeMessageInvalid, "acp: message has neither a method nor an id")
	}
	if len(w.Params) != 0 {
		return Message{}, checkfu.Refuse(CodeMessageInvalid, "acp: response carries params")
	}
	if (w.Result == nil) == (w.Error == nil) {
		return Message{}, checkfu.Refuse(CodeMessageInvalid, "acp: response %s must carry exactly one of result and error", checkfu.Quote(m.ID.raw))
	}
	if w.Error != nil {
		if w.Error.Code == nil || w.Error.Message == nil {
			return Message{}, checkfu.Refuse(CodeMessageInvalid, "acp: error object of response %s lacks code or message", checkfu.Quote(m.ID.raw))
		}
		m.Error = &RPCError{Code: *w.Error.Code, Message: *w.Error.Message, Data: w.Error.Data}
	}
	return m, nil
}

// invalidUTF8 returns the offset of the first byte of b that does not
// begin a valid UTF-8 encoding, or -1 when b is valid UTF-8.
func invalidUTF8(b []byte) int {
	if utf8.Valid(b) {
		return -1
	}
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 {
			return i
		}
		i += n
	}
	return -1
}

func nullIsAbsent(b json.RawMessage) json.RawMessage {
	if string(b) == "null" {
		return nil
	}
	return b
}
