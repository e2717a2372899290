package modelroute

import (
	"bytes"
	"encoding/json"
	"strings"
)

// providerFetches reports whether a request body of dialect d names a
// URL the provider would fetch itself, anywhere in the body: an
// Anthropic content block (an image or a document, in a message, a
// tool result or the system prompt) whose "source" is {"type":"url"};
// an OpenAI object (an input_image, a Chat image_url part, a
// computer_screenshot, whatever its type) whose "image_url" (or its
// "url") is not a data: URL, or whose "file_url" is a string (an
// input_file, a Chat file's file). The body is
// one strictjson has already read (no repeated member, valid UTF-8).
// Only a body that could name one is walked (mayFetch).
func providerFetches(d Dialect, body []byte) bool {
	if !mayFetch(d, body) {
		return false
	}
	var v any
	if json.Unmarshal(body, &v) != nil {
		return true // strictjson read it; anything else is refused, not guessed
	}
	return walkFetches(d, v)
}

// walkFetches is providerFetches over a decoded value.
func walkFetches(d Dialect, v any) bool {
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			if walkFetches(d, e) {
				return true
			}
		}
	case map[string]any:
		if namesFetch(d, x) {
			return true
		}
		for _, e := range x {
			if walkFetches(d, e) {
				return true
			}
		}
	}
	return false
}

// namesFetch reports whether the object o is one of the dialect's
// content parts that name a URL for the provider to fetch.
func namesFetch(d Dialect, o map[string]any) bool {
	switch d {
	case AnthropicMessages:
		src, ok := o["source"].(map[string]any)
		return ok && src["type"] == "url"
	case OpenAIResponses, OpenAIChat:
		// Whatever the part's type (input_image, a Chat image_url part,
		// a computer_screenshot, input_file, a Chat file, any the API
		// adds): an image_url that is not inline data, or a file_url
		// string. A tool schema's image_url or file_url property is an
		// object with no url, and passes.
		if iu, ok := o["image_url"].(map[string]any); ok {
			if remoteURL(iu["url"]) {
				return true
			}
		} else if remoteURL(o["image_url"]) {
			return true
		}
		if _, ok := o["file_url"].(string); ok {
			return true
		}
	}
	return false
}

// remoteURL reports whether v names something other than inline data:
// anything present but a data: URL.
func remoteURL(v any) bool {
	if v == nil {
		return false
	}
	s, ok := v.(string)
	return !ok || !strings.HasPrefix(strings.ToLower(strings.TrimSpace(s)), "data:")
}

// mayFetch reports whether body could name a URL for the provider to
// fetch, without decoding it: every such part needs the letters "url"
// in a member name or value (Anthropic's "url" source type, OpenAI's
// image_url and file_url members), written raw or with a \u escape of
// one of them. A body with no such escape, whose raw "url" strings are
// all member names (Anthropic: a tool schema's "url" property) or, for
// OpenAI, with no string ending in a raw url (whatever other letter of
// image_url or file_url is escaped), names none.
func mayFetch(d Dialect, body []byte) bool {
	if escapesURLLetter(body) {
		return true
	}
	if d != AnthropicMessages {
		return bytes.Contains(body, []byte(`url"`)) // image_url, file_url: names ending in raw "url"
	}
	for rest := body; ; {
		i := bytes.Index(rest, []byte(`"url"`))
		if i < 0 {
			return false
		}
		rest = rest[i+len(`"url"`):]
		if after := bytes.TrimLeft(rest, " \t\r\n"); len(after) == 0 || after[0] != ':' {
			return true // a value "url", not a member name
		}
	}
}

// escapesURLLetter reports whether body holds a \u escape of 'u', 'r'
// or 'l' (hex digits in either case).
func escapesURLLetter(body []byte) bool {
	for rest := body; ; {
		i := bytes.Index(rest, []byte(`\u00`))
		if i < 0 || len(rest) < i+6 {
			return false
		}
		switch strings.ToLower(string(rest[i+4 : i+6])) {
		case "75", "72", "6c":
			return true
		}
		rest = rest[i+4:]
	}
}
