package authz

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"path"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v5"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/custody/address"
	"github.com/checkfu/checkfu/gateway/modelroute"
)

// An Effect classifies what a registered capability does to the world.
// The zero Effect is invalid: a registration must say which it is.
type Effect uint8

const (
	effectUnset Effect = iota
	// ReadOnly capabilities only read provider state.
	ReadOnly
	// ExternalEffect capabilities change provider state; they run only
	// under an action-bound approval.
	ExternalEffect
)

// String returns "read_only", "external_effect" or "effect(N)".
func (e Effect) String() string {
	switch e {
	case ReadOnly:
		return "read_only"
	case ExternalEffect:
		return "external_effect"
	}
	return fmt.Sprintf("effect(%d)", uint8(e))
}

// Valid reports whether e is ReadOnly or ExternalEffect.
func (e Effect) Valid() bool { return e == ReadOnly || e == ExternalEffect }

// MarshalText implements encoding.TextMarshaler. The zero Effect
// marshals as empty text (which UnmarshalText refuses); other invalid
// values are refused.
func (e Effect) MarshalText() ([]byte, error) {
	if e == effectUnset {
		return []byte{}, nil
	}
	if !e.Valid() {
		return nil, checkfu.Refuse(CodeRegistrationInvalid, "authz: %s is not an effect", e)
	}
	return []byte(e.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler, accepting exactly
// "read_only" or "external_effect".
func (e *Effect) UnmarshalText(text []byte) error {
	switch string(text) {
	case "read_only":
		*e = ReadOnly
	case "external_effect":
		*e = ExternalEffect
	default:
		return checkfu.Refuse(CodeRegistrationInvalid, "authz: %s is not an effect (want read_only or external_effect)", checkfu.Quote(string(text)))
	}
	return nil
}

// A Protocol says how the outbound edge reaches a registration's
// resource. The zero Protocol is HTTPS, one plain request.
type Protocol uint8

const (
	// HTTPS: the call is one HTTPS request, the registration's
	// operation on its resource with the canonical arguments.
	HTTPS Protocol = iota
	// MCP: the resource is the streamable-HTTP endpoint of a remote MCP
	// server, and the call is its tools/call of the tool named by the
	// registration's Tool.Name with the canonical arguments, made by the
	// gateway as the server's client. The operation must be POST (the
	// method of every MCP message). The server's own tool descriptors
	// play no part: the registration's descriptor is the tool's.
	MCP
	// ModelAPI: the resource is a model provider's endpoint of one
	// dialect (the registration's Model.Dialect; the resource's path ends
	// with the dialect's path), and a call is an agent's own model
	// request, relayed through the model route with the model key
	// attached at the edge. The operation must be POST. It is never an
	// MCP tool: the broker does not list it.
	ModelAPI
)

// String returns "https", "mcp", "model" or "protocol(N)".
func (p Protocol) String() string {
	switch p {
	case HTTPS:
		return "https"
	case MCP:
		return "mcp"
	case ModelAPI:
		return "model"
	}
	return fmt.Sprintf("protocol(%d)", uint8(p))
}

// A ToolDescriptor is the canonical description of a tool that the active
// profile exposes: its name and the JSON Schema its arguments must satisfy.
type ToolDescriptor struct {
	Name        string
	Description string
	// InputSchema is a JSON Schema (draft 2020-12 unless it says
	// otherwise). Remote references are never fetched.
	InputSchema json.RawMessage
}

// A Registration is one exact, static capability registration: the
// capability id, the operation (an HTTP method), the HTTPS resource it
// reaches, the custody binding of the credential it uses, and whether it is read-only or has an
// external effect. Nothing about it is a pattern: every value a tool call
// carries must equal it byte for byte.
type Registration struct {
	Capability string
	Operation  string
	Resource   string
	Credential address.Binding
	Effect     Effect
	Tool       ToolDescriptor
	// Protocol is how the edge reaches Resource; the zero value is a
	// plain HTTPS request. It changes no check: the same exact match,
	// schema, lease and approval apply whatever it is.
	Protocol Protocol
	// Model is the model route of a ModelAPI registration (which
	// dialect, which models, what budget); it must be zero for any other
	// protocol.
	Model ModelRoute
}

// A ModelRoute is what a ModelAPI registration allows an agent's own
// model calls: the dialect the provider speaks, the exact model names
// (no pattern, no prefix), and a budget per session (shared by the
// channels of all its agents) in requests and in tokens as the provider
// reports them.
type ModelRoute struct {
	Dialect  modelroute.Dialect
	Models   []string
	Requests int64
	Tokens   int64
}

// ValidModelName reports whether s is a model name a registration may
// list: 1 to 128 of [A-Za-z0-9._:/-], so that it can stand in an event.
func ValidModelName(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("._:/-", c)) {
			return false
		}
	}
	return true
}

// validateModel checks a registration's model route against its protocol.
func validateModel(reg Registration) error {
	m := reg.Model
	if reg.Protocol != ModelAPI {
		if m.Dialect != "" || m.Models != nil || m.Requests != 0 || m.Tokens != 0 {
			return fmt.Errorf("a model route belongs only to a model registration")
		}
		return nil
	}
	if reg.Operation != "POST" || reg.Effect != ReadOnly {
		return fmt.Errorf("a model registration is a read_only POST, not %s %q", reg.Effect, reg.Operation)
	}
	if m.Dialect.Path() == "" || !strings.HasSuffix(reg.Resource, m.Dialect.Path()) {
		return fmt.Errorf("a model registration's resource ends with its dialect's path (dialect %q)", m.Dialect)
	}
	if len(m.Models) == 0 || slices.ContainsFunc(m.Models, func(s string) bool { return !ValidModelName(s) }) {
		return fmt.Errorf("a model registration lists 1 or more models, each 1 to 128 of [A-Za-z0-9._:/-]")
	}
	if m.Requests <= 0 || m.Tokens <= 0 {
		return fmt.Errorf("a model registration's budget is positive in requests and in tokens")
	}
	return nil
}

// A ToolCall is what a harness asks for: a registered tool with its
// arguments. Capability, Tool, Operation and Resource must equal the
// registration exactly; Arguments must satisfy the tool's schema.
type ToolCall struct {
	Capability string
	Tool       string
	Operation  string
	Resource   string
	Arguments  json.RawMessage
}

// An Action is a tool call resolved against its registration: the
// canonical form an approval binds and the outbound edge sends. Body is
// the canonical JSON of the validated arguments.
type Action struct {
	Capability string
	Operation  string
	Resource   string
	Effect     Effect
	Body       []byte
}

const actionDomain = "checkfu/custody/action/v1"

// digestStack is the size of the buffer Digest lays a small action out
// in without allocating.
const digestStack = 512

// Digest returns the canonical digest of a, "sha256:" followed by hex, over
// a domain label and every field, each length-prefixed.
func (a Action) Digest() string {
	// The fields are laid out in one buffer and hashed at once, where a
	// hash.Hash and a conversion per field cost five allocations: the
	// buffer is on the stack when they fit in digestStack bytes (the
	// string is then the one allocation).
	n := 6*8 + len(actionDomain) + len(a.Capability) + len(a.Operation) + len(a.Resource) + 1 + len(a.Body)
	var stack [digestStack]byte
	buf := stack[:0]
	if n > len(stack) {
		buf = make([]byte, 0, n)
	}
	field := func(f string) {
		buf = binary.BigEndian.AppendUint64(buf, uint64(len(f)))
		buf = append(buf, f...)
	}
	field(actionDomain)
	field(a.Capability)
	field(a.Operation)
	field(a.Resource)
	buf = binary.BigEndian.AppendUint64(buf, 1)
	buf = append(buf, byte(a.Effect))
	buf = binary.BigEndian.AppendUint64(buf, uint64(len(a.Body)))
	buf = append(buf, a.Body...)
	sum := sha256.Sum256(buf)
	var out [len("sha256:") + 2*sha256.Size]byte
	copy(out[:], "sha256:")
	hex.Encode(out[len("sha256:"):], sum[:])
	return string(out[:])
}

// A Registry holds a fixed set of capability registrations. It is built
// once by NewRegistry and never changes; it is safe for concurrent use.
// The zero Registry knows no capability and refuses every call.
type Registry struct {
	regs map[string]*registered
}

type registered struct {
	Registration
	schema     *jsonschema.Schema
	quick      *quickSchema    // nil unless the schema is in quickSchema's subset
	declared   map[string]bool // the schema's top-level property names
	connection string          // Registration.Credential.String(), made once
}

var operations = map[string]bool{"GET": true, "HEAD": true, "POST": true, "PUT": true, "PATCH": true, "DELETE": true}

// bodiless reports whether op sends its arguments as a query string.
func bodiless(op string) bool { return op == "GET" || op == "HEAD" || op == "DELETE" }

// NewRegistry validates every registration and returns a Registry that
// holds them. Any invalid or duplicated registration is refused with
// [CodeRegistrationInvalid] and no registry is built.
func NewRegistry(regs ...Registration) (*Registry, error) {
	r := &Registry{regs: make(map[string]*registered, len(regs))}
	for i, reg := range regs {
		s, err := validateRegistration(reg)
		if err != nil {
			return nil, fmt.Errorf("authz: registration %d: %w", i, err)
		}
		if _, dup := r.regs[reg.Capability]; dup {
			return nil, checkfu.Refuse(CodeRegistrationInvalid, "authz: capability %s is registered twice", checkfu.Quote(reg.Capability))
		}
		reg.Tool.InputSchema = bytes.Clone(reg.Tool.InputSchema)
		reg.Model.Models = slices.Clone(reg.Model.Models)
		var quick *quickSchema
		var declared map[string]bool
		if tree, err := parseStrictJSON(reg.Tool.InputSchema); err == nil {
			quick, _ = quickSchemaOf(tree)
			declared = declaredProperties(tree)
		}
		r.regs[reg.Capability] = &registered{Registration: reg, schema: s, quick: quick, declared: declared, connection: reg.Credential.String()}
	}
	return r, nil
}

func validIdent(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

func validateRegistration(reg Registration) (*jsonschema.Schema, error) {
	bad := func(format string, args ...any) error {
		return checkfu.Refuse(CodeRegistrationInvalid, "authz: capability %q: "+format, append([]any{reg.Capability}, args...)...)
	}
	if !validIdent(reg.Capability) {
		return nil, bad("a capability id is 1 to 128 of [a-z0-9._-]")
	}
	if !operations[reg.Operation] {
		return nil, bad("operation %q is not GET, HEAD, POST, PUT, PATCH or DELETE", reg.Operation)
	}
	if err := validateResource(reg.Resource); err != nil {
		return nil, bad("%v", err)
	}
	if err := reg.Credential.Validate(); err != nil {
		return nil, bad("credential reference: %v", err)
	}
	if !reg.Effect.Valid() {
		return nil, bad("effect must be read_only or external_effect, not %s", reg.Effect)
	}
	switch {
	case reg.Protocol == MCP && reg.Operation != "POST":
		return nil, bad("a remote MCP tool's operation is POST, not %q", reg.Operation)
	case reg.Protocol != HTTPS && reg.Protocol != MCP && reg.Protocol != ModelAPI:
		return nil, bad("protocol must be https, mcp or model, not %s", reg.Protocol)
	}
	if err := validateModel(reg); err != nil {
		return nil, bad("%v", err)
	}
	if !validIdent(reg.Tool.Name) {
		return nil, bad("tool name %q is not 1 to 128 of [a-z0-9._-]", reg.Tool.Name)
	}
	return compileSchema(reg.Capability, reg.Tool.InputSchema, bad)
}

// validateResource accepts only an absolute https URL with a host, no
// userinfo, query or fragment, and a clean path.
func validateResource(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("resource %s does not parse", checkfu.Quote(s))
	}
	switch {
	case u.Scheme != "https":
		return fmt.Errorf("resource %s is not an https URL", checkfu.Quote(s))
	case u.Host == "" || u.Hostname() == "":
		return fmt.Errorf("resource %s has no host", checkfu.Quote(s))
	case u.User != nil:
		return fmt.Errorf("resource %s carries userinfo", checkfu.Quote(s))
	case u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.ContainsAny(s, "?#\\"):
		return fmt.Errorf("resource %s carries a query, fragment or backslash", checkfu.Quote(s))
	case u.Host != strings.ToLower(u.Host):
		return fmt.Errorf("resource %s has an upper-case host", checkfu.Quote(s))
	}
	p := u.EscapedPath()
	if p == "" || p[0] != '/' || path.Clean(p) != p && path.Clean(p)+"/" != p {
		return fmt.Errorf("resource %s needs a clean absolute path", checkfu.Quote(s))
	}
	if u.String() != s {
		return fmt.Errorf("resource %s is not in canonical form (%s)", checkfu.Quote(s), checkfu.Quote(u.String()))
	}
	return nil
}

var errRemoteSchema = fmt.Errorf("remote schema references are not fetched")

func compileSchema(id string, raw json.RawMessage, bad func(string, ...any) error) (*jsonschema.Schema, error) {
	if len(raw) == 0 {
		return nil, bad("tool descriptor has no input schema")
	}
	if _, err := parseStrictJSON(raw); err != nil {
		return nil, bad("input schema: %v", err)
	}
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft2020
	c.AssertFormat = true
	c.LoadURL = func(string) (io.ReadCloser, error) { return nil, errRemoteSchema }
	const loc = "checkfu:///tool.json"
	if err := c.AddResource(loc, bytes.NewReader(raw)); err != nil {
		return nil, bad("input schema: %v", err)
	}
	s, err := c.Compile(loc)
	if err != nil {
		return nil, bad("input schema does not compile: %v", err)
	}
	return s, nil
}

// Lookup returns the registration of the capability id, and false when it
// is not registered.
func (r *Registry) Lookup(capability string) (Registration, bool) {
	e, ok := r.Find(capability)
	if !ok {
		return Registration{}, false
	}
	return e.Registration(), true
}

// An Entry is one registration of a Registry, found once by
// [Registry.Find], for a caller that needs the registration's facts
// before it resolves a call against it (the call pipeline checks the
// permission assignment, which names the registration's credential,
// between the two). Its fields are unexported: it reads the registry's
// own copy, which never changes. The zero Entry is no registration: it
// reports the zero credential and resolves no call.
type Entry struct {
	reg *registered
}

// Find returns the entry of the capability id, and false when it is not
// registered.
func (r *Registry) Find(capability string) (Entry, bool) {
	if r == nil {
		return Entry{}, false
	}
	reg, ok := r.regs[capability]
	if !ok {
		return Entry{}, false
	}
	return Entry{reg: reg}, true
}

// Registration returns a copy of e's registration, as [Registry.Lookup]
// does (the zero Registration for the zero Entry).
func (e Entry) Registration() Registration {
	if e.reg == nil {
		return Registration{}
	}
	out := e.reg.Registration
	out.Tool.InputSchema = bytes.Clone(out.Tool.InputSchema)
	out.Model.Models = slices.Clone(out.Model.Models)
	return out
}

// Credential returns the custody binding of e's credential: the
// registration's Credential, without copying the rest.
func (e Entry) Credential() address.Binding {
	if e.reg == nil {
		return address.Binding{}
	}
	return e.reg.Credential
}

// Connection returns the text of e's credential binding
// (Credential().String()), the Connection a [PermissionTarget] of a
// call of e names, made once when the registry was built ("" for the
// zero Entry).
func (e Entry) Connection() string {
	if e.reg == nil {
		return ""
	}
	return e.reg.connection
}

// Protocol returns how the edge reaches e's resource: the
// registration's Protocol, without copying the rest.
func (e Entry) Protocol() Protocol {
	if e.reg == nil {
		return HTTPS
	}
	return e.reg.Protocol
}

// Resolve checks call against e, in the order of [Registry.Resolve] past
// its lookup, and returns the canonical Action: the zero Entry resolves
// nothing ([CodeCapabilityUnknown]); call must name e's capability, and
// its tool name, operation, resource and the credential reference the
// caller will use must all equal the registration
// ([CodeCapabilityMismatch]); then the arguments must be strict JSON
// satisfying the tool's schema ([CodeArgumentsInvalid]). It is pure.
func (e Entry) Resolve(call ToolCall, credential address.Binding) (Action, error) {
	if e.reg == nil {
		return Action{}, errUnknown(call.Capability)
	}
	if call.Capability != e.reg.Capability {
		return Action{}, checkfu.Refuse(CodeCapabilityMismatch, "authz: capability %s does not match the registration (%s)", checkfu.Quote(call.Capability), checkfu.Quote(e.reg.Capability))
	}
	return e.reg.resolve(call, credential)
}

// Resolve checks call against its registration and returns the canonical
// Action. It is pure: no I/O, no provider contact. The order is fixed:
// the capability must be registered ([CodeCapabilityUnknown]); the tool
// name, operation, resource and the credential reference the caller will
// use must all equal the registration ([CodeCapabilityMismatch]); then
// the arguments must be strict JSON satisfying the tool's schema
// ([CodeArgumentsInvalid]).
func (r *Registry) Resolve(call ToolCall, credential address.Binding) (Action, error) {
	reg, err := r.registered(call.Capability)
	if err != nil {
		return Action{}, err
	}
	return reg.resolve(call, credential)
}

// resolve is Resolve past the lookup: the exact match, then the
// arguments.
func (reg *registered) resolve(call ToolCall, credential address.Binding) (Action, error) {
	if err := reg.match(call, credential); err != nil {
		return Action{}, err
	}
	body, err := validateArguments(reg, call.Arguments)
	if err != nil {
		return Action{}, err
	}
	return reg.action(body), nil
}

// validateArguments parses args strictly (no two members of an object
// whose names differ only in case, either: see checkFoldedMembers),
// validates them against the
// tool's schema and returns their canonical JSON.
func validateArguments(reg *registered, args json.RawMessage) ([]byte, error) {
	v, err := parseStrictJSON(args)
	if err == nil {
		err = checkFoldedMembers(v)
	}
	if err != nil {
		return nil, checkfu.Refuse(CodeArgumentsInvalid, "authz: capability %s: arguments: %v", checkfu.Quote(reg.Capability), err)
	}
	// The schema validator decides every call the quick check does not
	// accept.
	if reg.quick == nil || !reg.quick.accepts(v) {
		if err := reg.schema.Validate(v); err != nil {
			return nil, checkfu.Refuse(CodeArgumentsInvalid, "authz: capability %s: arguments do not satisfy the tool schema: %v", checkfu.Quote(reg.Capability), schemaReason(err))
		}
	}
	if bodiless(reg.Operation) {
		err := checkQueryArguments(v)
		if err == nil {
			m, _ := v.(map[string]any) // checkQueryArguments refused anything else
			err = checkQueryAliases(m, reg.declared)
		}
		if err != nil {
			return nil, checkfu.Refuse(CodeArgumentsInvalid, "authz: capability %s: %s arguments: %v", checkfu.Quote(reg.Capability), reg.Operation, err)
		}
	} else if err := checkBodyMethodOverride(v); err != nil {
		return nil, checkfu.Refuse(CodeArgumentsInvalid, "authz: capability %s: %s arguments: %v", checkfu.Quote(reg.Capability), reg.Operation, err)
	}
	return canonicalJSON(v)
}

// schemaReason returns the validation error's location and message without
// echoing the argument values (which are content, not for error strings).
func schemaReason(err error) string {
	var ve *jsonschema.ValidationError
	if ok := asValidationError(err, &ve); ok {
		leaf := ve
		for len(leaf.Causes) > 0 {
			leaf = leaf.Causes[0]
		}
		return fmt.Sprintf("at %s: %s", checkfu.Quote(leaf.InstanceLocation), leaf.KeywordLocation)
	}
	return "invalid"
}

func asValidationError(err error, ve **jsonschema.ValidationError) bool {
	v, ok := err.(*jsonschema.ValidationError)
	if ok {
		*ve = v
	}
	return ok
}

// checkQueryArguments requires an object of scalar values, which become
// the query string of a bodiless request.
func checkQueryArguments(v any) error {
	m, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("must be an object")
	}
	for k, x := range m {
		switch x.(type) {
		case string, json.Number, bool:
		default:
			return fmt.Errorf("property %s must be a string, number or boolean", checkfu.Quote(k))
		}
	}
	return nil
}
