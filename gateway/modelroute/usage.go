package modelroute

import (
	"bytes"
	"encoding/json"
	"math"
)

// Usage is what a provider reports a request used. Counts are never
// negative: a negative report counts as zero, and a sum past the int64
// range stays at its largest value (a provider cannot wrap the budget).
type Usage struct {
	InputTokens  int64
	OutputTokens int64
	// Final reports that the provider reported the request's final
	// usage: Anthropic's message_delta (or a whole answer's usage),
	// OpenAI Responses' usage of its terminal event, a Chat Completions
	// chunk or answer with usage. A stream cut before it (the agent hung
	// up, the provider stopped) has not.
	Final bool
}

// addTokens adds b to a, both taken as at least zero, and stays at
// math.MaxInt64 instead of wrapping.
func addTokens(a, b int64) int64 {
	a, b = max(a, 0), max(b, 0)
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
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
// JSON answer of each dialect carries usage at its top level; Gemini
// reports in usageMetadata (gemini). Anything it cannot read leaves the
// counts as they were.
func (r *usageReader) event(data []byte) {
	if r.d == Gemini {
		r.gemini(data)
		return
	}
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
			r.u.InputTokens = addTokens(addTokens(*u.Input, u.CacheCreate), u.CacheRead)
		}
		if u.Output != nil {
			r.u.OutputTokens = max(*u.Output, 0)
			// message_start reports the output so far; a message_delta
			// or a whole answer, the final count.
			r.u.Final = r.u.Final || ev.Type != "message_start"
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
			r.u.InputTokens = max(*u.Input, 0)
		}
		if u.Output != nil {
			r.u.OutputTokens = max(*u.Output, 0)
			r.u.Final = true // only a terminal event carries usage
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
			r.u.InputTokens = max(*u.Prompt, 0)
		}
		if u.Completion != nil {
			r.u.OutputTokens = max(*u.Completion, 0)
			r.u.Final = true
		}
	}
}

// usageMarker is what an event of dialect d that reports usage contains
// (the relay reads no other event): the end of the usage member's name.
func usageMarker(d Dialect) []byte {
	if d == Gemini {
		return []byte(`usageMetadata"`)
	}
	return []byte(`usage"`)
}

// gemini reads a Gemini chunk's (or whole answer's) usageMetadata. Each
// chunk of a stream that carries it reports the counts of the whole
// request so far, not a chunk's own, and the last chunk, whose
// candidate has a finishReason, the final ones: the input is
// promptTokenCount (cached content included) plus
// toolUsePromptTokenCount, the output candidatesTokenCount plus
// thoughtsTokenCount; a totalTokenCount above their sum (a count in a
// member the route does not read) is a floor, the rest charged as
// output. A chunk without a count leaves it as it was.
func (r *usageReader) gemini(data []byte) {
	if !bytes.Contains(data, []byte(`"usageMetadata"`)) {
		return
	}
	var ev struct {
		Usage *struct {
			Prompt     *int64 `json:"promptTokenCount"`
			ToolUse    int64  `json:"toolUsePromptTokenCount"`
			Candidates *int64 `json:"candidatesTokenCount"`
			Thoughts   int64  `json:"thoughtsTokenCount"`
			Total      *int64 `json:"totalTokenCount"`
		} `json:"usageMetadata"`
		Candidates []struct {
			FinishReason string `json:"finishReason"`
		} `json:"candidates"`
	}
	if json.Unmarshal(data, &ev) != nil || ev.Usage == nil {
		return
	}
	u := ev.Usage
	if u.Prompt != nil {
		r.u.InputTokens = addTokens(*u.Prompt, u.ToolUse)
	}
	if u.Candidates != nil || u.Thoughts != 0 {
		r.u.OutputTokens = addTokens(derefTokens(u.Candidates), u.Thoughts)
	}
	if u.Total != nil && *u.Total > addTokens(r.u.InputTokens, r.u.OutputTokens) {
		// A count in a member the route does not read: the total is a
		// floor, the rest charged as output.
		r.u.OutputTokens = *u.Total - r.u.InputTokens
	}
	for _, c := range ev.Candidates {
		if c.FinishReason != "" {
			r.u.Final = true // the chunk that ends the answer
		}
	}
}

// derefTokens is *p, or 0 for nil.
func derefTokens(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}
