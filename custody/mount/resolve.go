package mount

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/custody/authz"
)

// MaxFileBytes is the largest file body a Resolver serves or writes.
const MaxFileBytes = 32 << 20

// A LeaseHolder reports whether a lease is live for a scope.
// *authz.Leases implements it.
type LeaseHolder interface {
	Hold(lease string, scope authz.LeaseScope) error
}

var _ LeaseHolder = (*authz.Leases)(nil)

// A Source is the platform-side half of a mount: the Mount the sandbox
// sees and the host directory that backs it. Dir never enters the Plan.
type Source struct {
	Mount Mount
	Dir   string
}

// An Error is an I/O failure while resolving a file: not a refusal.
type Error struct {
	Op  string
	Err error
}

// Error returns "mount: OP: CAUSE".
func (e *Error) Error() string { return "mount: " + e.Op + ": " + e.Err.Error() }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// A Resolver serves the file bodies behind mount plans, on the platform
// side. Each session's lease id and scope stay in the Resolver; each read
// and write first checks that lease. It is safe for concurrent use.
type Resolver struct {
	leases LeaseHolder

	mu       sync.Mutex
	sessions map[string]*session // guarded by mu
}

type session struct {
	lease  string
	scope  authz.LeaseScope
	mounts map[string]*rooted
}

type rooted struct {
	mount Mount
	root  *os.Root
}

// NewResolver returns a Resolver that checks leases with leases.
func NewResolver(leases LeaseHolder) *Resolver {
	return &Resolver{leases: leases, sessions: map[string]*session{}}
}

// afterOpenRoot runs in Attach after a source's Dir is opened, before the
// host directories are compared; tests use it to swap a Dir's symlink.
var afterOpenRoot = func(string) {}

// afterCheck runs between the lexical check and the open; tests use it to
// swap a symlink in after the check.
var afterCheck = func(string) {}

// Attach registers a session's mounts and returns its credential-free
// Plan. The session's lease must be live for scope now. The lease id and
// scope stay here; the plan holds neither.
func (r *Resolver) Attach(sessionID, lease string, scope authz.LeaseScope, sources ...Source) (Plan, error) {
	if r == nil || r.leases == nil {
		return Plan{}, checkfu.Refuse(CodeSessionUnknown, "mount: the zero Resolver attaches nothing")
	}
	if !validName(sessionID) {
		return Plan{}, checkfu.Refuse(CodePlanInvalid, "mount: session %s is not 1 to 64 of [a-z0-9_-]", checkfu.Quote(sessionID))
	}
	if len(sources) == 0 {
		return Plan{}, checkfu.Refuse(CodePlanInvalid, "mount: session %s has no mounts", checkfu.Quote(sessionID))
	}
	if err := r.leases.Hold(lease, scope); err != nil {
		return Plan{}, err
	}
	s := &session{lease: lease, scope: scope, mounts: map[string]*rooted{}}
	plan := Plan{Session: sessionID}
	closeAll := func() {
		for _, m := range s.mounts {
			m.root.Close()
		}
	}
	for _, src := range sources {
		m := src.Mount
		if err := checkMount(m); err != nil {
			closeAll()
			return Plan{}, err
		}
		for _, prev := range plan.Mounts {
			if prev.Name == m.Name || overlaps(prev.Target, m.Target) {
				closeAll()
				return Plan{}, checkfu.Refuse(CodePlanInvalid, "mount %s: name or target %s collides with mount %s", checkfu.Quote(m.Name), checkfu.Quote(m.Target), checkfu.Quote(prev.Name))
			}
		}
		root, err := os.OpenRoot(src.Dir)
		if err != nil {
			closeAll()
			return Plan{}, &Error{Op: "open mount " + m.Name, Err: errors.Unwrap(err)}
		}
		s.mounts[m.Name] = &rooted{mount: m, root: root}
		afterOpenRoot(m.Name)
		plan.Mounts = append(plan.Mounts, m)
	}
	if err := checkHostOverlap(s, sources); err != nil {
		closeAll()
		return Plan{}, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.sessions[sessionID]; dup {
		closeAll()
		return Plan{}, checkfu.Refuse(CodePlanInvalid, "mount: session %s is already attached", checkfu.Quote(sessionID))
	}
	r.sessions[sessionID] = s
	return plan, nil
}

// checkHostOverlap refuses sources whose host directories are the same or
// nested, however their Dirs spell them: a write through one mount would
// change what another serves (a writable project tree holding a read-only
// memory directory, say). Each mount's opened directory is compared, by
// file identity, with every directory on the real path of each other
// source's Dir, from that directory up to the file system root; that path
// must still lead to the directory the source's mount opened.
func checkHostOverlap(s *session, sources []Source) error {
	for _, src := range sources {
		real, err := filepath.EvalSymlinks(src.Dir)
		if err == nil {
			real, err = filepath.Abs(real)
		}
		if err != nil {
			return &Error{Op: "resolve mount " + src.Mount.Name, Err: cause(err)}
		}
		var chain []fs.FileInfo // real and its ancestors
		for dir := real; ; dir = filepath.Dir(dir) {
			fi, err := os.Stat(dir)
			if err != nil {
				return &Error{Op: "resolve mount " + src.Mount.Name, Err: cause(err)}
			}
			chain = append(chain, fi)
			if filepath.Dir(dir) == dir {
				break
			}
		}
		// The path is resolved again here, after Attach opened it: pin it
		// to the directory the mount serves, or a symlink on it changed in
		// between would have the check walk up from another directory.
		own, err := s.mounts[src.Mount.Name].root.Stat(".")
		if err != nil {
			return &Error{Op: "stat mount " + src.Mount.Name, Err: cause(err)}
		}
		if !os.SameFile(chain[0], own) {
			return checkfu.Refuse(CodePlanInvalid, "mount %s: its host directory changed while it was attached", checkfu.Quote(src.Mount.Name))
		}
		for _, other := range sources {
			if other.Mount.Name == src.Mount.Name {
				continue
			}
			ofi, err := s.mounts[other.Mount.Name].root.Stat(".")
			if err != nil {
				return &Error{Op: "stat mount " + other.Mount.Name, Err: cause(err)}
			}
			for _, fi := range chain {
				if os.SameFile(fi, ofi) {
					return checkfu.Refuse(CodePlanInvalid, "mount %s: its host directory is, or lies inside, that of mount %s", checkfu.Quote(src.Mount.Name), checkfu.Quote(other.Mount.Name))
				}
			}
		}
	}
	return nil
}

// cause returns the error inside a *fs.PathError, which quotes a host
// path, or err itself.
func cause(err error) error {
	if c := errors.Unwrap(err); c != nil {
		return c
	}
	return err
}

// Detach forgets the session and closes its mounts.
func (r *Resolver) Detach(sessionID string) error {
	r.mu.Lock()
	s, ok := r.sessions[sessionID]
	delete(r.sessions, sessionID)
	r.mu.Unlock()
	if !ok {
		return checkfu.Refuse(CodeSessionUnknown, "mount: no session %s", checkfu.Quote(sessionID))
	}
	for _, m := range s.mounts {
		m.root.Close()
	}
	return nil
}

// lookup checks the session's lease and the name, and returns the mount.
func (r *Resolver) lookup(sessionID, mountName, name string) (*rooted, error) {
	if r == nil {
		return nil, checkfu.Refuse(CodeSessionUnknown, "mount: no session %s", checkfu.Quote(sessionID))
	}
	r.mu.Lock()
	s, ok := r.sessions[sessionID]
	r.mu.Unlock()
	if !ok {
		return nil, checkfu.Refuse(CodeSessionUnknown, "mount: no session %s", checkfu.Quote(sessionID))
	}
	if err := r.leases.Hold(s.lease, s.scope); err != nil {
		return nil, err
	}
	m, ok := s.mounts[mountName]
	if !ok {
		return nil, checkfu.Refuse(CodeMountUnknown, "mount: session %s has no mount %s", checkfu.Quote(sessionID), checkfu.Quote(mountName))
	}
	if !fs.ValidPath(name) || name == "." {
		return nil, checkfu.Refuse(CodePathInvalid, "mount %s: %s is not a clean relative path", checkfu.Quote(mountName), checkfu.Quote(name))
	}
	return m, nil
}

// ReadFile returns the body of the regular file name inside the session's
// mount, after checking the session's lease.
func (r *Resolver) ReadFile(ctx context.Context, sessionID, mountName, name string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m, err := r.lookup(sessionID, mountName, name)
	if err != nil {
		return nil, err
	}
	afterCheck(name)
	f, err := m.root.OpenFile(name, os.O_RDONLY|openNonblock, 0)
	if err != nil {
		return nil, classify(mountName, name, err)
	}
	defer f.Close()
	fi, err := servable(mountName, name, f)
	if err != nil {
		return nil, err
	}
	if fi.Size() > MaxFileBytes {
		return nil, checkfu.Refuse(CodeTooLarge, "mount %s: %s is larger than %d bytes", checkfu.Quote(mountName), checkfu.Quote(name), MaxFileBytes)
	}
	body, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, &Error{Op: "read", Err: errors.Unwrap(err)}
	}
	if len(body) > MaxFileBytes {
		return nil, checkfu.Refuse(CodeTooLarge, "mount %s: %s is larger than %d bytes", checkfu.Quote(mountName), checkfu.Quote(name), MaxFileBytes)
	}
	return body, nil
}

// WriteFile replaces the body of the regular file name inside a writable
// mount of the session, creating it with mode 0o644 if needed, after
// checking the session's lease. Parent directories must exist.
func (r *Resolver) WriteFile(ctx context.Context, sessionID, mountName, name string, body []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m, err := r.lookup(sessionID, mountName, name)
	if err != nil {
		return err
	}
	if !m.mount.Writable {
		return checkfu.Refuse(CodeReadOnly, "mount %s is not writable", checkfu.Quote(mountName))
	}
	if len(body) > MaxFileBytes {
		return checkfu.Refuse(CodeTooLarge, "mount %s: a body of %d bytes is larger than %d", checkfu.Quote(mountName), len(body), MaxFileBytes)
	}
	afterCheck(name)
	// Not O_TRUNC: the file is emptied only once servable has checked
	// it, so a refused file is left as it was.
	f, err := m.root.OpenFile(name, os.O_WRONLY|os.O_CREATE|openNonblock, 0o644)
	if err != nil {
		return classify(mountName, name, err)
	}
	if _, err := servable(mountName, name, f); err != nil {
		f.Close()
		return err
	}
	err = f.Truncate(0)
	if err == nil {
		_, err = f.Write(body)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return &Error{Op: "write", Err: errors.Unwrap(err)}
	}
	return nil
}

// servable returns the FileInfo of f, opened as name in mountName, or
// refuses it (see checkServable).
func servable(mountName, name string, f *os.File) (fs.FileInfo, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, &Error{Op: "stat", Err: errors.Unwrap(err)}
	}
	return fi, checkServable(mountName, name, fi)
}

// checkServable refuses a file that is not regular or whose only name is
// not the one opened. A file with another name (a hard link) may have it
// outside the mount, where os.Root cannot see it, so a read would serve
// and a write would change a file outside the grant; a file whose names
// cannot be counted is refused too.
func checkServable(mountName, name string, fi fs.FileInfo) error {
	if !fi.Mode().IsRegular() {
		return checkfu.Refuse(CodeNotRegular, "mount %s: %s is not a regular file", checkfu.Quote(mountName), checkfu.Quote(name))
	}
	switch n := linkCount(fi); {
	case n == 0:
		return checkfu.Refuse(CodeFileLinked, "mount %s: the names of %s cannot be counted; only a file with one name is served", checkfu.Quote(mountName), checkfu.Quote(name))
	case n > 1:
		return checkfu.Refuse(CodeFileLinked, "mount %s: %s has %d names (hard links); only a file with one name is served", checkfu.Quote(mountName), checkfu.Quote(name), n)
	}
	return nil
}

// classify turns an os.Root open error into a refusal or an Error. The
// host path is never included.
func classify(mountName, name string, err error) error {
	cause := errors.Unwrap(err)
	if cause == nil {
		cause = err
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return checkfu.Refuse(CodeNotFound, "mount %s: %s does not exist", checkfu.Quote(mountName), checkfu.Quote(name))
	case escapes(cause):
		return checkfu.Refuse(CodePathEscapes, "mount %s: %s resolves outside the mount", checkfu.Quote(mountName), checkfu.Quote(name))
	case openedNonRegular(err):
		return checkfu.Refuse(CodeNotRegular, "mount %s: %s is not a regular file", checkfu.Quote(mountName), checkfu.Quote(name))
	}
	return &Error{Op: fmt.Sprintf("open %s", checkfu.Quote(name)), Err: cause}
}

// escapes reports whether cause is os.Root's refusal to leave its
// directory. The os package does not export that error, so it is matched
// by text; TestEscapeErrorText pins it.
func escapes(cause error) bool { return cause.Error() == "path escapes from parent" }
