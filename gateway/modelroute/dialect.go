package modelroute

import (
	"encoding/json"
	"net/http"
	"net/textproto"
	"slices"
	"strings"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/internal/strictjson"
)

// MaxRequestBytes bounds an agent's request body: 32 MiB holds a long
// conversation with images, and a larger body is refused before it is
// parsed.
const MaxRequestBytes = 32 << 20

// A Dialect is one model API.
type Dialect string

// The dialects the route speaks.
const (
	// AnthropicMessages: POST /v1/messages (Claude Code, opencode).
	AnthropicMessages Dialect = "anthropic-messages"
	// OpenAIResponses: POST /v1/responses (Codex).
	OpenAIResponses Dialect = "openai-responses"
	// OpenAIChat: POST /v1/chat/completions (OpenAI-compatible clients).
	OpenAIChat Dialect = "openai-chat"
	// Gemini: the Gemini API, which names the model in the path:
	// POST /v1beta/models/{model}:generateContent and
	// :streamGenerateContent?alt=sse (Gemini CLI).
	Gemini Dialect = "gemini"
)

// The Gemini API's two methods the route serves, named in the path
// after the model and a colon.
const (
	// GeminiGenerate answers with one JSON object.
	GeminiGenerate = "generateContent"
	// GeminiStream answers with server-sent events, given the query
	// alt=sse.
	GeminiStream = "streamGenerateContent"
)

// geminiSSEQuery is the only query a Gemini request may carry, and only
// on GeminiStream (without it the API streams a JSON array the relay
// does not read). The route sends it itself (Upstream).
const geminiSSEQuery = "alt=sse"

// MaxGeminiModelBytes bounds the model name a Gemini path carries, as
// authz.ValidModelName bounds a registration's: a longer one is refused
// before anything else is read.
const MaxGeminiModelBytes = 128

// validGeminiModel reports whether s may stand as a model in a Gemini
// path: 1 to MaxGeminiModelBytes of [A-Za-z0-9._-], not starting with
// '.' and with no "..": no '/', '%', ':' or anything else that would
// reach past the path segment it is put in.
func validGeminiModel(s string) bool {
	if s == "" || len(s) > MaxGeminiModelBytes || s[0] == '.' || strings.Contains(s, "..") {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// geminiPath splits a Gemini path, Path() + "/{model}:{method}", into its
// model and method: the model valid (validGeminiModel), the method
// exactly GeminiGenerate or GeminiStream. Anything else is not ok.
func geminiPath(path string) (model, method string, ok bool) {
	rest, ok := strings.CutPrefix(path, Gemini.Path()+"/")
	if !ok {
		return "", "", false
	}
	model, method, ok = strings.Cut(rest, ":")
	if !ok || method != GeminiGenerate && method != GeminiStream || !validGeminiModel(model) {
		return "", "", false
	}
	return model, method, true
}

// Path returns the dialect's path, or "" for an unknown dialect: the
// path its registrations' resource ends with. It is the one path the
// dialect serves but Anthropic Messages' token count (CountTokensPath),
// except for Gemini, which serves Path() + "/{model}:{method}" for the
// model and method it names (Serves).
func (d Dialect) Path() string {
	switch d {
	case AnthropicMessages:
		return "/v1/messages"
	case OpenAIResponses:
		return "/v1/responses"
	case OpenAIChat:
		return "/v1/chat/completions"
	case Gemini:
		return "/v1beta/models"
	}
	return ""
}

// countTokensSuffix follows the Anthropic Messages path in the one other
// path a dialect serves: POST /v1/messages/count_tokens, where the
// provider counts a Messages body's input tokens and generates nothing.
// Claude Code sends one a turn.
const countTokensSuffix = "/count_tokens"

// CountTokensPath returns the dialect's token-counting path, its Path
// followed by "/count_tokens": Anthropic Messages' only. Any other
// dialect has none ("").
func (d Dialect) CountTokensPath() string {
	if d == AnthropicMessages {
		return d.Path() + countTokensSuffix
	}
	return ""
}

// Serves reports whether path is exactly one of the dialect's paths: its
// Path, or its CountTokensPath; for Gemini, Path() + "/{model}:{method}"
// with a valid model name (1 to MaxGeminiModelBytes of [A-Za-z0-9._-],
// no "..", not starting with '.') and a method of GeminiGenerate and
// GeminiStream. No other sub-path, prefix or suffix is.
func (d Dialect) Serves(path string) bool {
	if d == Gemini {
		_, _, ok := geminiPath(path)
		return ok
	}
	return path != "" && (path == d.Path() || path == d.CountTokensPath())
}

// KeyHeader returns the header the outbound edge puts the model key in
// (never the agent): x-api-key for Anthropic, x-goog-api-key for
// Gemini, Authorization (as "Bearer KEY") for OpenAI.
func (d Dialect) KeyHeader() string {
	switch d {
	case AnthropicMessages:
		return "X-Api-Key"
	case Gemini:
		return "X-Goog-Api-Key"
	}
	return "Authorization"
}

// ContentType is the one Content-Type a model request is sent with, in
// every dialect: the route reads the body as UTF-8 JSON (strictjson), so
// that is what it tells the provider, whatever the agent said (a form
// encoding or another charset would have the provider read other bytes
// than the route checked).
const ContentType = "application/json"

// The Accept values the route sends, chosen from the request it read,
// never the agent's: what the dialect answers a request with.
const (
	// AcceptJSON is sent with a request that is not streamed (a
	// Messages token count included): one JSON answer.
	AcceptJSON = "application/json"
	// AcceptStream is sent with a streamed request: server-sent events.
	AcceptStream = "text/event-stream"
)

// keptHeaders are, per dialect, the only request headers an agent's
// request keeps (canonical form). Everything else is dropped.
var keptHeaders = map[Dialect][]string{
	AnthropicMessages: {"Anthropic-Beta", "Anthropic-Version"},
	OpenAIResponses:   {"Openai-Beta"},
	OpenAIChat:        {},
	Gemini:            {},
}

// Accept returns the Accept header the route sends with r: AcceptStream
// for a streamed request, AcceptJSON for any other (a token count is
// never streamed).
func (r Request) Accept() string {
	if r.Stream && !r.CountTokens {
		return AcceptStream
	}
	return AcceptJSON
}

// Headers returns the headers the route sends with r: Content-Type
// [ContentType] and Accept (r.Accept), both the route's own, and the
// headers of in that r's dialect keeps: its API version and beta flags;
// for OpenAI Chat and Gemini none. Every other header, the agent's
// Content-Type and Accept among them, which includes every credential-
// or routing-bearing one (Authorization, X-Api-Key, X-Goog-Api-Key,
// X-Goog-User-Project, X-Goog-Api-Client, Cookie, Host, Forwarded,
// X-Forwarded-*, Proxy-*, OpenAI-Organization, OpenAI-Project), is
// dropped.
func (r Request) Headers(in http.Header) http.Header {
	out := http.Header{}
	out.Set("Content-Type", ContentType)
	out.Set("Accept", r.Accept())
	for name, vs := range in {
		if slices.Contains(keptHeaders[r.Dialect], textproto.CanonicalMIMEHeaderKey(name)) {
			out[textproto.CanonicalMIMEHeaderKey(name)] = slices.Clone(vs)
		}
	}
	return out
}

// MaxChatChoices bounds a Chat Completions request's "n", the number of
// answers it asks for: a request for more is refused
// ([CodeModelRequestInvalid]). Each answer may run to the output cap,
// so a stream cut before its usage would be charged one cap for
// several.
const MaxChatChoices = 1

// anthropicBetaQuery is the one query an Anthropic Messages request may
// carry (Claude Code sends it on every request). It selects nothing the
// route keeps: the request sent upstream has no query.
const anthropicBetaQuery = "beta=true"

// providerDials reports whether a tool of type typ in dialect d makes
// the provider itself connect to a destination the request names: an
// Anthropic web_fetch server tool (any version), an OpenAI Responses
// remote MCP tool. Through such a tool an agent in a sandbox without a
// network would have the provider carry its data to any URL.
func providerDials(d Dialect, typ string) bool {
	switch d {
	case AnthropicMessages:
		return strings.HasPrefix(typ, "web_fetch")
	case OpenAIResponses:
		return typ == "mcp"
	}
	return false
}

// A Request is what the route reads of an agent's model request: never
// its content.
type Request struct {
	Dialect Dialect
	Model   string
	Stream  bool
	// MaxOutput is the request's own cap on output tokens (Anthropic's
	// max_tokens, Responses' max_output_tokens, the larger of Chat's
	// max_completion_tokens and max_tokens), 0 when it names none.
	// A stream cut before its usage is charged it (Meter.Settle).
	MaxOutput int64
	// Bytes is the body's length: a stream cut before its usage is
	// charged at least as many input tokens (a token is at least a byte
	// of the text it stands for).
	Bytes int64
	// CountTokens reports a request to the dialect's CountTokensPath:
	// the provider counts its input and generates nothing, so it is
	// charged no tokens (Meter.Settle), and it goes to the registered
	// resource followed by "/count_tokens" (Upstream).
	CountTokens bool
	// Method is a Gemini request's method, named in its path
	// (GeminiGenerate or GeminiStream); "" in the other dialects.
	Method string
}

// Upstream returns the URL r is sent to, given the registration's
// resource (which ends with the dialect's Path, and has no query or
// fragment): the resource itself, or for a token count the resource
// followed by "/count_tokens"; for Gemini, the resource followed by
// "/", the checked model name, ":" and the method, and for a stream
// "?alt=sse". Nothing of the agent's own path text is in it: a
// Gemini model or method that ParseRequest would not have read gives "",
// which forms no request.
func (r Request) Upstream(resource string) string {
	if r.Dialect == Gemini {
		if !validGeminiModel(r.Model) {
			return ""
		}
		switch r.Method {
		case GeminiGenerate:
			return resource + "/" + r.Model + ":" + GeminiGenerate
		case GeminiStream:
			return resource + "/" + r.Model + ":" + GeminiStream + "?" + geminiSSEQuery
		}
		return ""
	}
	if r.CountTokens {
		return resource + countTokensSuffix
	}
	return resource
}

// ParseRequest reads an agent's request in dialect d. The method must be
// POST and the path exactly one the dialect serves (its Path, or for
// Anthropic Messages its CountTokensPath), with no query but
// "beta=true" for Anthropic Messages ([CodeModelPathRefused]).
// A token count's body is read as a Messages body. The body must be a
// strict JSON object (no repeated
// member, valid UTF-8, at most MaxRequestBytes) with a non-empty string
// "model" of at most 256 bytes and, if present, a boolean "stream",
// integer output caps, tools whose "type" is a string, and for Chat an
// integer "n" of at most MaxChatChoices ([CodeModelRequestInvalid]).
// A request that asks the provider to connect to a destination it
// names (Anthropic "mcp_servers" or a web_fetch server tool, an OpenAI
// Responses "mcp" tool) or to fetch a URL a content part names (an
// Anthropic "url" source, an OpenAI image or file URL that is not a
// data: URL) is refused ([CodeModelToolRefused]).
func ParseRequest(d Dialect, method, path, rawQuery string, body []byte) (Request, error) {
	if d == Gemini {
		return parseGemini(method, path, rawQuery, body)
	}
	if !d.Serves(path) || method != http.MethodPost || rawQuery != "" && !(d == AnthropicMessages && rawQuery == anthropicBetaQuery) {
		return Request{}, checkfu.Refuse(CodeModelPathRefused, "modelroute: %s %s is not the %s route", checkfu.Quote(method), checkfu.Quote(path), d)
	}
	var fields struct {
		Model               *string         `json:"model"`
		Stream              *bool           `json:"stream"`
		MaxTokens           *int64          `json:"max_tokens"`
		MaxOutputTokens     *int64          `json:"max_output_tokens"`
		MaxCompletionTokens *int64          `json:"max_completion_tokens"`
		MCPServers          json.RawMessage `json:"mcp_servers"`
		Choices             json.RawMessage `json:"n"`
		Tools               []struct {
			Type string `json:"type"`
		} `json:"tools"`
	}
	if err := strictjson.Unmarshal(body, &fields, strictjson.Options{MaxBytes: MaxRequestBytes, AllowUnknownMembers: true}); err != nil {
		return Request{}, checkfu.Refuse(CodeModelRequestInvalid, "modelroute: the request body is not a strict JSON object: %v", err)
	}
	if fields.Model == nil || *fields.Model == "" || len(*fields.Model) > 256 {
		return Request{}, checkfu.Refuse(CodeModelRequestInvalid, "modelroute: the request names no model")
	}
	if d == AnthropicMessages && len(fields.MCPServers) > 0 && !slices.Contains([]string{"null", "[]"}, string(fields.MCPServers)) {
		return Request{}, checkfu.Refuse(CodeModelToolRefused, "modelroute: the request names MCP servers for the provider to connect to")
	}
	if d == OpenAIChat && present(fields.Choices) {
		var n int64
		if err := json.Unmarshal(fields.Choices, &n); err != nil || n < 0 || n > MaxChatChoices {
			return Request{}, checkfu.Refuse(CodeModelRequestInvalid, "modelroute: the request asks for more than %d choice", MaxChatChoices)
		}
	}
	for _, tool := range fields.Tools {
		if providerDials(d, tool.Type) {
			return Request{}, checkfu.Refuse(CodeModelToolRefused, "modelroute: the request asks for the provider-side tool %s", checkfu.Quote(tool.Type))
		}
	}
	if providerFetches(d, body) {
		return Request{}, checkfu.Refuse(CodeModelToolRefused, "modelroute: the request names a URL for the provider to fetch")
	}
	r := Request{Dialect: d, Model: *fields.Model, Stream: fields.Stream != nil && *fields.Stream, Bytes: int64(len(body)), CountTokens: path == d.CountTokensPath()}
	for _, c := range map[Dialect][]*int64{
		AnthropicMessages: {fields.MaxTokens},
		OpenAIResponses:   {fields.MaxOutputTokens},
		OpenAIChat:        {fields.MaxCompletionTokens, fields.MaxTokens},
	}[d] {
		if c != nil && *c > r.MaxOutput {
			r.MaxOutput = *c // the larger, where a provider might read either
		}
	}
	return r, nil
}
