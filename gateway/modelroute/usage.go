package modelroute

import (
	"bytes"
	"encoding/json"
)

// Usage is what a provider reports a request used.
type Usage struct {
	InputTokens  int64
	OutputTokens int64
}

// usageReader reads the usage a dialect's stream or answer reports.
type usageReader struct {
	d Dialect
	u Usage
}

// event reads one server-sent event's data (or a whole JSON answer).
// Anthropic reports input tokens in message_start (message.usage,
// cache tokens included) and the cumulative output tokens in each
// message_delta (usage.output_tokens); OpenAI Responses in
// response.completed (response.usage); Chat Completions in the chunk or
// answer that carries usage (prompt_tokens, completion_tokens). A whole
// JSON answer of each dialect carries usage at its top level. Anything it
// cannot read leaves the counts as they were.
func (r *usageReader) event(data []byte) {
	if !bytes.Contains(data, []byte(`"usage"`)) {
		return // most events of a stream report nothing
	}
	var ev struct {
		Type    string          `json:"type"`
		Usage   json.RawMessage `json:"usage"`
		Message *struct {
			Usage json.RawMessage `json:"usage"`
		} `json:"message"`
		Response *struct {
			Usage json.RawMessage `json:"usage"`
		} `json:"response"`
	}
	if json.Unmarshal(data, &ev) != nil {
		return
	}
	switch r.d {
	case AnthropicMessages:
		var u struct {
			Input       *int64 `json:"input_tokens"`
			CacheCreate int64  `json:"cache_creation_input_tokens"`
			CacheRead   int64  `json:"cache_read_input_tokens"`
			Output      *int64 `json:"output_tokens"`
		}
		raw := ev.Usage
		if ev.Type == "message_start" && ev.Message != nil {
			raw = ev.Message.Usage
		}
		if len(raw) == 0 || json.Unmarshal(raw, &u) != nil {
			return
		}
		if u.Input != nil {
			r.u.InputTokens = *u.Input + u.CacheCreate + u.CacheRead
		}
		if u.Output != nil {
			r.u.OutputTokens = *u.Output
		}
	case OpenAIResponses:
		raw := ev.Usage
		if ev.Response != nil && len(ev.Response.Usage) > 0 {
			raw = ev.Response.Usage
		}
		var u struct {
			Input  *int64 `json:"input_tokens"`
			Output *int64 `json:"output_tokens"`
		}
		if len(raw) == 0 || json.Unmarshal(raw, &u) != nil {
			return
		}
		if u.Input != nil {
			r.u.InputTokens = *u.Input
		}
		if u.Output != nil {
			r.u.OutputTokens = *u.Output
		}
	case OpenAIChat:
		var u struct {
			Prompt     *int64 `json:"prompt_tokens"`
			Completion *int64 `json:"completion_tokens"`
		}
		if len(ev.Usage) == 0 || json.Unmarshal(ev.Usage, &u) != nil {
			return
		}
		if u.Prompt != nil {
			r.u.InputTokens = *u.Prompt
		}
		if u.Completion != nil {
			r.u.OutputTokens = *u.Completion
		}
	}
}
