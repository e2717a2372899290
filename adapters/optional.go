package adapters

import (
	"context"
	"io"

	"github.com/checkfu/checkfu"
)

// A DirLister is an instance implementing the list_dir optional member.
type DirLister interface {
	// ListDir returns the names in the directory at path inside the
	// instance, sorted.
	ListDir(ctx context.Context, path string) ([]string, error)
}

// A Snapshotter is an instance implementing the snapshots optional
// member.
type Snapshotter interface {
	// Snapshot captures the instance's state and returns a reference the
	// provider can restore or clone from.
	Snapshot(ctx context.Context) (string, error)
}

// A FileTransferer is an instance implementing the file transfer
// optional member.
type FileTransferer interface {
	// ReadFile copies the file at path inside the instance to w.
	ReadFile(ctx context.Context, path string, w io.Writer) error
	// WriteFile writes r to the file at path inside the instance.
	WriteFile(ctx context.Context, path string, r io.Reader) error
}

// ListDir calls the list_dir member of inst, an instance of p. It refuses
// with [CodeMemberUndeclared] when p does not declare list_dir, whether
// or not inst could do it, and with [CodeMemberUnimplemented] when p
// declares it and inst does not implement [DirLister].
func ListDir(ctx context.Context, p Provider, inst Instance, path string) ([]string, error) {
	m, err := member[DirLister](p.Describe(), p.Describe().Members.ListDir, "list_dir", inst)
	if err != nil {
		return nil, err
	}
	return m.ListDir(ctx, path)
}

// Snapshot calls the snapshots member of inst, an instance of p, with the
// refusals of [ListDir].
func Snapshot(ctx context.Context, p Provider, inst Instance) (string, error) {
	m, err := member[Snapshotter](p.Describe(), p.Describe().Members.Snapshots, "snapshots", inst)
	if err != nil {
		return "", err
	}
	return m.Snapshot(ctx)
}

// ReadFile calls the file transfer member of inst, an instance of p,
// with the refusals of [ListDir].
func ReadFile(ctx context.Context, p Provider, inst Instance, path string, w io.Writer) error {
	m, err := member[FileTransferer](p.Describe(), p.Describe().Members.FileTransfer, "file transfer", inst)
	if err != nil {
		return err
	}
	return m.ReadFile(ctx, path, w)
}

// WriteFile calls the file transfer member of inst, an instance of p,
// with the refusals of [ListDir].
func WriteFile(ctx context.Context, p Provider, inst Instance, path string, r io.Reader) error {
	m, err := member[FileTransferer](p.Describe(), p.Describe().Members.FileTransfer, "file transfer", inst)
	if err != nil {
		return err
	}
	return m.WriteFile(ctx, path, r)
}

// member returns inst as T when the declaration allows it. The
// declaration is consulted first, so an undeclared member is refused
// even when inst happens to implement it.
func member[T any](d Description, declared bool, name string, inst Instance) (T, error) {
	var zero T
	if !declared {
		return zero, checkfu.Refuse(CodeMemberUndeclared, "adapters: %s does not declare %s", d.Identity, name)
	}
	m, ok := inst.(T)
	if !ok {
		return zero, checkfu.Refuse(CodeMemberUnimplemented, "adapters: %s declares %s but its instance does not implement it", d.Identity, name)
	}
	return m, nil
}
