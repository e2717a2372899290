package acp

import (
	"fmt"

	"github.com/checkfu/checkfu"
)

// An RPCError is a JSON-RPC 2.0 error object: the agent answered a request
// with an error. It is a failure reported by the peer, not a refusal of
// this package.
type RPCError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	// Data is the optional "data" member, verbatim.
	Data []byte `json:"-"`
}

// Error returns "acp: agent error CODE: " and MESSAGE quoted by
// checkfu.Quote (Go syntax, cut at 64 bytes with its length appended):
// the agent wrote it, so its control bytes must not reach a log or
// terminal raw, nor its length fill one. Message holds it whole.
func (e *RPCError) Error() string {
	return fmt.Sprintf("acp: agent error %d: %s", e.Code, checkfu.Quote(e.Message))
}
