package runner

import (
	"fmt"
	"path"
	"strings"

	"github.com/checkfu/checkfu"
)

// MaxPermissionLocations bounds the locations of a permission request's
// tool call that the Runner inspects to decide a workspace read. A
// request naming more is not allowed unasked, whatever its locations.
const MaxPermissionLocations = 64

// The ACP tool kinds (ToolKind) a workspace read may have: each names a
// tool that changes nothing ("read": reading files or data; "search":
// searching for information; "think": internal reasoning or planning).
// Every other kind ("edit", "delete", "move", "execute", "fetch",
// "switch_mode", "other", an empty or an unknown one) is not a workspace
// read.
const (
	kindRead   = "read"
	kindSearch = "search"
	kindThink  = "think"
)

// workspaceRead reports whether an agent's own tool call, of ACP tool
// kind kind touching the locations paths, is a read of the workspace
// rooted at root that the Runner allows without asking anyone; when it
// is not, why says so, with the agent's text quoted. It is pure: it
// decides from the strings alone, and reads no file system.
//
// It allows only when all of these hold:
//   - root is absolute, clean and not "/" (a workspace that is the whole
//     file system is no workspace);
//   - kind is "read", "search" or "think";
//   - there are at most MaxPermissionLocations paths, and at least one
//     unless kind is "think" (a read of nothing named may read anything);
//   - every path is absolute (ACP requires it), holds no NUL and no ".."
//     element, and is root or below it once "." elements, repeated and
//     trailing slashes are removed.
//
// A ".." element is refused even when it would end inside root: the
// operating system resolves "root/link/.." through the link, so it is
// inside only if link is not a symbolic link, which no lexical check can
// know. The check is lexical for the same reason everywhere else: a
// symbolic link inside the workspace may point outside it, and for an
// isolated or remote sandbox the host cannot resolve links in the
// sandbox's file system at all (nor could it without a race with the
// agent). The decision is consent to the agent's own tool; the sandbox
// is the boundary of what that tool can reach.
func workspaceRead(root, kind string, paths []string) (ok bool, why string) {
	if !path.IsAbs(root) || path.Clean(root) != root || root == "/" {
		return false, "the session has no workspace root to read under"
	}
	switch kind {
	case kindRead, kindSearch:
		if len(paths) == 0 {
			return false, fmt.Sprintf("a %s names no location", kind)
		}
	case kindThink:
	default:
		return false, fmt.Sprintf("tool kind %s is not read, search or think", checkfu.Quote(kind))
	}
	if len(paths) > MaxPermissionLocations {
		return false, fmt.Sprintf("%d locations, more than %d", len(paths), MaxPermissionLocations)
	}
	for _, p := range paths {
		if why := outsideRoot(root, p); why != "" {
			return false, fmt.Sprintf("location %s %s", checkfu.Quote(p), why)
		}
	}
	return true, ""
}

// outsideRoot returns why p is not a path at or below root, or "" when
// it is one. root is absolute, clean and not "/".
func outsideRoot(root, p string) string {
	if !path.IsAbs(p) {
		return "is not absolute"
	}
	if strings.IndexByte(p, 0) >= 0 {
		return "holds a NUL"
	}
	for _, e := range strings.Split(p, "/") {
		if e == ".." {
			return "has a .. element"
		}
	}
	if c := path.Clean(p); c != root && !strings.HasPrefix(c, root+"/") {
		return "is outside the workspace " + checkfu.Quote(root)
	}
	return ""
}

// workspaceRoot is the root a permission request's locations are
// checked under: the cwd session/new names, unless that is the fallback
// Cwd that neither the process spec nor the instance named. With no
// known root, no request is a workspace read.
func workspaceRoot(cwd string) string {
	if cwd == Cwd {
		return ""
	}
	return cwd
}
