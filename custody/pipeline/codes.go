package pipeline

import "github.com/checkfu/checkfu"

// Refusal codes of the call pipeline.
const (
	// CodeChannelUnknown: the call came over a channel this pipeline did
	// not open, or one already closed.
	CodeChannelUnknown checkfu.Code = "channel_unknown"
)
