package frame

import "github.com/checkfu/checkfu"

// The codec's one code; package wire re-exports it.
const (
	// CodeProtocolError refuses a malformed frame. It ends the
	// connection; the process is unaffected.
	CodeProtocolError checkfu.Code = "protocol_error"
)
