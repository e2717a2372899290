package mount

import (
	"fmt"
	"path"

	"github.com/checkfu/checkfu"
)

// A Kind says what a mount carries. The zero Kind is invalid.
type Kind uint8

const (
	_ Kind = iota // the zero Kind: invalid, refused everywhere
	// ProjectTree is a project's source tree.
	ProjectTree
	// MemoryDir is an agent memory directory.
	MemoryDir
)

// String returns "project_tree", "memory_dir" or "kind(N)".
func (k Kind) String() string {
	switch k {
	case ProjectTree:
		return "project_tree"
	case MemoryDir:
		return "memory_dir"
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// Valid reports whether k is ProjectTree or MemoryDir.
func (k Kind) Valid() bool { return k == ProjectTree || k == MemoryDir }

// MarshalText implements encoding.TextMarshaler; it refuses invalid kinds.
func (k Kind) MarshalText() ([]byte, error) {
	if !k.Valid() {
		return nil, checkfu.Refuse(CodePlanInvalid, "mount: %s is not a mount kind", k)
	}
	return []byte(k.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler, accepting exactly
// "project_tree" or "memory_dir".
func (k *Kind) UnmarshalText(text []byte) error {
	switch string(text) {
	case "project_tree":
		*k = ProjectTree
	case "memory_dir":
		*k = MemoryDir
	default:
		return checkfu.Refuse(CodePlanInvalid, "mount: %s is not a mount kind (want project_tree or memory_dir)", checkfu.Quote(string(text)))
	}
	return nil
}

// A Mount is one entry of a Plan, as the sandbox sees it.
type Mount struct {
	Name     string `json:"name"`
	Kind     Kind   `json:"kind"`
	Target   string `json:"target"` // absolute path inside the sandbox
	Writable bool   `json:"writable"`
}

// A Plan is the credential-free runtime handoff that gives a sandbox its
// project trees and memory directories. It names the session whose lease
// the platform checks; it carries nothing the sandbox could present as
// authority.
type Plan struct {
	Session string  `json:"session"`
	Mounts  []Mount `json:"mounts"`
}

func validName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// checkMount validates m alone.
func checkMount(m Mount) error {
	switch {
	case !validName(m.Name):
		return checkfu.Refuse(CodePlanInvalid, "mount: name %s is not 1 to 64 of [a-z0-9_-]", checkfu.Quote(m.Name))
	case !m.Kind.Valid():
		return checkfu.Refuse(CodePlanInvalid, "mount %s: %s is not a mount kind", checkfu.Quote(m.Name), m.Kind)
	case m.Target == "" || m.Target[0] != '/' || path.Clean(m.Target) != m.Target || m.Target == "/":
		return checkfu.Refuse(CodePlanInvalid, "mount %s: target %s is not a clean absolute path below /", checkfu.Quote(m.Name), checkfu.Quote(m.Target))
	}
	return nil
}

// overlaps reports whether one of the two sandbox paths contains the other.
func overlaps(a, b string) bool {
	return a == b || len(a) < len(b) && b[:len(a)+1] == a+"/" || len(b) < len(a) && a[:len(b)+1] == b+"/"
}
