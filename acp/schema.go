package acp

import (
	"bytes"
	"encoding/json"
)

// ProtocolVersion is the ACP protocol version this package speaks.
const ProtocolVersion = 1

// The ACP method names this package sends or answers.
const (
	MethodInitialize        = "initialize"
	MethodSessionNew        = "session/new"
	MethodSessionPrompt     = "session/prompt"
	MethodSessionCancel     = "session/cancel"
	MethodSessionUpdate     = "session/update"
	MethodRequestPermission = "session/request_permission"
)

// Implementation names a client or an agent ("clientInfo", "agentInfo").
type Implementation struct {
	Name    string `json:"name"`
	Title   string `json:"title,omitempty"`
	Version string `json:"version"`
}

// FileSystemCapability says which fs/* methods the client serves.
type FileSystemCapability struct {
	ReadTextFile  bool `json:"readTextFile"`
	WriteTextFile bool `json:"writeTextFile"`
}

// ClientCapabilities is what the client advertises in initialize. The
// [Client] serves no fs/* or terminal/* method, so it always advertises
// false for them.
type ClientCapabilities struct {
	FS       FileSystemCapability `json:"fs"`
	Terminal bool                 `json:"terminal"`
}

// InitializeRequest is the params of initialize.
type InitializeRequest struct {
	ProtocolVersion    int                `json:"protocolVersion"`
	ClientCapabilities ClientCapabilities `json:"clientCapabilities"`
	ClientInfo         *Implementation    `json:"clientInfo,omitempty"`
}

// AgentCapabilities is the part of the agent's capabilities a Runner acts
// on; Raw holds the whole object verbatim.
type AgentCapabilities struct {
	LoadSession bool            `json:"loadSession"`
	Raw         json.RawMessage `json:"-"`
}

// UnmarshalJSON decodes the known fields and keeps the object in Raw.
func (c *AgentCapabilities) UnmarshalJSON(b []byte) error {
	type plain AgentCapabilities
	var p plain
	if err := decodeMembers(b, &p); err != nil {
		return err
	}
	*c = AgentCapabilities(p)
	c.Raw = append(json.RawMessage(nil), b...)
	return nil
}

// InitializeResponse is the result of initialize.
type InitializeResponse struct {
	ProtocolVersion   int               `json:"protocolVersion"`
	AgentCapabilities AgentCapabilities `json:"agentCapabilities"`
	AgentInfo         *Implementation   `json:"agentInfo,omitempty"`
	AuthMethods       json.RawMessage   `json:"authMethods,omitempty"`
}

// NewSessionRequest is the params of session/new.
//
// The fields ResumeBlob, BuiltinTools, Continuity and RuntimeConfig are
// checkfu harness fields, not ACP fields. ACP reserves every root field
// name for itself, so they travel inside "_meta" under the key "checkfu":
//
//	{"cwd":"/w","mcpServers":[],"_meta":{"checkfu":{"resume_blob":"<base64>",
//	 "builtinTools":["read"],"continuity":{...},"runtimeConfig":{...}}}}
//
// Every one of them, and the number of MCP servers, is bounded by
// [SessionLimits] before the frame is written.
type NewSessionRequest struct {
	// Cwd is the session's working directory, an absolute path.
	Cwd string
	// MCPServers are the MCP server configurations, verbatim JSON objects.
	MCPServers []json.RawMessage
	// ResumeBlob is the harness's opaque resume state (base64 on the wire).
	ResumeBlob []byte
	// BuiltinTools names the harness tools to enable.
	BuiltinTools []string
	// Continuity is a JSON document carried across sessions.
	Continuity json.RawMessage
	// RuntimeConfig is a JSON document configuring the harness runtime.
	RuntimeConfig json.RawMessage
}

type harnessMeta struct {
	ResumeBlob    []byte          `json:"resume_blob,omitempty"`
	BuiltinTools  []string        `json:"builtinTools,omitempty"`
	Continuity    json.RawMessage `json:"continuity,omitempty"`
	RuntimeConfig json.RawMessage `json:"runtimeConfig,omitempty"`
}

type wireNewSession struct {
	Cwd        string            `json:"cwd"`
	MCPServers []json.RawMessage `json:"mcpServers"`
	Meta       *struct {
		Checkfu *harnessMeta `json:"checkfu,omitempty"`
	} `json:"_meta,omitempty"`
}

// MarshalJSON encodes r in the ACP shape described on the type.
func (r NewSessionRequest) MarshalJSON() ([]byte, error) {
	w := wireNewSession{Cwd: r.Cwd, MCPServers: r.MCPServers}
	if w.MCPServers == nil {
		w.MCPServers = []json.RawMessage{}
	}
	h := harnessMeta{ResumeBlob: r.ResumeBlob, BuiltinTools: r.BuiltinTools, Continuity: r.Continuity, RuntimeConfig: r.RuntimeConfig}
	if len(h.ResumeBlob) > 0 || len(h.BuiltinTools) > 0 || len(h.Continuity) > 0 || len(h.RuntimeConfig) > 0 {
		w.Meta = &struct {
			Checkfu *harnessMeta `json:"checkfu,omitempty"`
		}{&h}
	}
	return json.Marshal(w)
}

// UnmarshalJSON decodes the ACP shape described on the type.
func (r *NewSessionRequest) UnmarshalJSON(b []byte) error {
	var w wireNewSession
	if err := decodeMembers(b, &w); err != nil {
		return err
	}
	*r = NewSessionRequest{Cwd: w.Cwd, MCPServers: w.MCPServers}
	if w.Meta != nil && w.Meta.Checkfu != nil {
		h := w.Meta.Checkfu
		r.ResumeBlob, r.BuiltinTools, r.Continuity, r.RuntimeConfig = h.ResumeBlob, h.BuiltinTools, h.Continuity, h.RuntimeConfig
	}
	return nil
}

// NewSessionResponse is the result of session/new.
type NewSessionResponse struct {
	SessionID string `json:"sessionId"`
}

// A ContentBlock is one block of a prompt or of agent output. Type is
// "text", "image", "audio", "resource_link" or "resource"; the other
// fields are set as that type requires.
type ContentBlock struct {
	Type     string          `json:"type"`
	Text     string          `json:"text,omitempty"`
	Data     string          `json:"data,omitempty"`
	MimeType string          `json:"mimeType,omitempty"`
	URI      string          `json:"uri,omitempty"`
	Name     string          `json:"name,omitempty"`
	Resource json.RawMessage `json:"resource,omitempty"`
}

// TextBlock returns a text content block.
func TextBlock(text string) ContentBlock { return ContentBlock{Type: "text", Text: text} }

// PromptRequest is the params of session/prompt.
type PromptRequest struct {
	SessionID string         `json:"sessionId"`
	Prompt    []ContentBlock `json:"prompt"`
}

// A StopReason says why a prompt turn ended.
type StopReason string

// The stop reasons of ACP v1.
const (
	StopEndTurn         StopReason = "end_turn"
	StopMaxTokens       StopReason = "max_tokens"
	StopMaxTurnRequests StopReason = "max_turn_requests"
	StopRefusal         StopReason = "refusal"
	StopCancelled       StopReason = "cancelled"
)

// Valid reports whether r is one of the stop reasons of ACP v1.
func (r StopReason) Valid() bool {
	switch r {
	case StopEndTurn, StopMaxTokens, StopMaxTurnRequests, StopRefusal, StopCancelled:
		return true
	}
	return false
}

// PromptResponse is the result of session/prompt.
type PromptResponse struct {
	StopReason StopReason `json:"stopReason"`
}

// CancelNotification is the params of session/cancel.
type CancelNotification struct {
	SessionID string `json:"sessionId"`
}

// A SessionNotification is the params of one session/update. Update is
// kept verbatim so that the update path does no decoding beyond the
// discriminator: call [SessionNotification.Kind] for it, and decode Update
// only for the kinds a Runner acts on.
type SessionNotification struct {
	SessionID string          `json:"sessionId"`
	Update    json.RawMessage `json:"update"`
	Meta      json.RawMessage `json:"_meta,omitempty"`
}

// Kind returns the "sessionUpdate" discriminator of the update, such as
// "agent_message_chunk", "tool_call" or "tool_call_update", or "" when it
// has none.
func (n *SessionNotification) Kind() string {
	var k struct {
		SessionUpdate string `json:"sessionUpdate"`
	}
	if bytes.Contains(n.Update, []byte(`"sessionUpdate"`)) {
		_ = decodeMembers(n.Update, &k)
	}
	return k.SessionUpdate
}

// A PermissionOption is one choice offered by session/request_permission.
// Kind is "allow_once", "allow_always", "reject_once" or "reject_always".
type PermissionOption struct {
	OptionID string `json:"optionId"`
	Name     string `json:"name"`
	Kind     string `json:"kind"`
}

// ToolCallUpdate identifies the tool call a permission request is about;
// Raw holds the whole object verbatim.
type ToolCallUpdate struct {
	ToolCallID string          `json:"toolCallId"`
	Title      string          `json:"title,omitempty"`
	Kind       string          `json:"kind,omitempty"`
	Raw        json.RawMessage `json:"-"`
}

// UnmarshalJSON decodes the known fields and keeps the object in Raw.
func (t *ToolCallUpdate) UnmarshalJSON(b []byte) error {
	type plain ToolCallUpdate
	var p plain
	if err := decodeMembers(b, &p); err != nil {
		return err
	}
	*t = ToolCallUpdate(p)
	t.Raw = append(json.RawMessage(nil), b...)
	return nil
}

// RequestPermissionRequest is the params of session/request_permission,
// which the agent sends to the client.
type RequestPermissionRequest struct {
	SessionID string             `json:"sessionId"`
	ToolCall  ToolCallUpdate     `json:"toolCall"`
	Options   []PermissionOption `json:"options"`
}

// permissionOptionOverhead is what one PermissionOption holds beyond its
// strings' bytes: three string headers.
const permissionOptionOverhead = 3 * 16

// heldBytes returns the number of bytes r holds in memory, counted as the
// bytes of its strings and of ToolCall.Raw, plus 48 for each option (its
// three string headers, so that a long list of empty options counts). It
// is what Config.MaxPendingPermissionBytes bounds.
func (r *RequestPermissionRequest) heldBytes() int {
	n := len(r.SessionID) + len(r.ToolCall.ToolCallID) + len(r.ToolCall.Title) + len(r.ToolCall.Kind) + len(r.ToolCall.Raw)
	for _, o := range r.Options {
		n += permissionOptionOverhead + len(o.OptionID) + len(o.Name) + len(o.Kind)
	}
	return n
}

// A PermissionOutcome is the client's answer: Outcome is "selected" with
// OptionID set, or "cancelled".
type PermissionOutcome struct {
	Outcome  string `json:"outcome"`
	OptionID string `json:"optionId,omitempty"`
}

// Select returns the outcome selecting optionID.
func Select(optionID string) PermissionOutcome {
	return PermissionOutcome{Outcome: "selected", OptionID: optionID}
}

// CancelledOutcome returns the outcome of a permission request answered
// after (or because of) session/cancel.
func CancelledOutcome() PermissionOutcome { return PermissionOutcome{Outcome: "cancelled"} }

// RequestPermissionResponse is the result of session/request_permission.
type RequestPermissionResponse struct {
	Outcome PermissionOutcome `json:"outcome"`
}
