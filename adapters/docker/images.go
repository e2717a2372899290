package docker

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/checkfu/checkfu"
)

// ImageOptions configures the images built without a registry.
type ImageOptions struct {
	// CacheDir holds downloaded packages between runs. Empty means
	// os.UserCacheDir()/checkfu/docker.
	CacheDir string
	// Binaries are host files added to the image, keyed by their absolute
	// path in the image (such as "/usr/local/bin/probe"), mode 0755.
	Binaries map[string]string
}

// rootFile is one entry of an image's root filesystem.
type rootFile struct {
	mode     int64
	data     []byte
	link     string // symlink target when set
	dir      bool
	uid, gid int
}

// epoch is every entry's modification time, so the same content gives
// the same tar and the same image tag.
var epoch = time.Unix(0, 0)

// tarOf writes files as a tar in path order.
func tarOf(files map[string]rootFile) ([]byte, error) {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, n := range names {
		f := files[n]
		h := &tar.Header{Name: strings.TrimPrefix(n, "/"), Mode: f.mode, ModTime: epoch, Uid: f.uid, Gid: f.gid, Format: tar.FormatPAX}
		switch {
		case f.dir:
			h.Typeflag, h.Name = tar.TypeDir, h.Name+"/"
		case f.link != "":
			h.Typeflag, h.Linkname = tar.TypeSymlink, f.link
		default:
			h.Typeflag, h.Size = tar.TypeReg, int64(len(f.data))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if h.Typeflag == tar.TypeReg {
			if _, err := tw.Write(f.data); err != nil {
				return nil, err
			}
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// importCached imports tarball as NAME:HASH, where HASH is the content
// hash of the tar and of changes, unless the engine already has it.
func (e *Engine) importCached(ctx context.Context, name string, tarball []byte, changes []string) (string, error) {
	h := sha256.New()
	h.Write(tarball)
	for _, c := range changes {
		h.Write([]byte{0})
		h.Write([]byte(c))
	}
	ref := name + ":" + hex.EncodeToString(h.Sum(nil))[:16]
	if _, err := e.c.InspectImage(ctx, ref); err == nil {
		return ref, nil
	} else if !errors.Is(err, CodeImageMissing) {
		return "", err
	}
	changes = append(changes, fmt.Sprintf("LABEL %s=%s", e.labelKey, e.labelValue))
	if err := e.c.ImportImage(ctx, ref, bytes.NewReader(tarball), changes); err != nil {
		return "", err
	}
	return ref, nil
}

// addBinaries adds opts.Binaries to files.
func addBinaries(files map[string]rootFile, bins map[string]string) error {
	for dst, src := range bins {
		if !filepath.IsAbs(dst) || filepath.Clean(dst) != dst {
			return checkfu.Refuse(checkfu.CodeConfigInvalid, "docker: image path %s is not a clean absolute path", checkfu.Quote(dst))
		}
		data, err := os.ReadFile(src)
		if err != nil {
			return &checkfu.Refusal{Code: CodeImageBuildFailed, Message: "docker: reading binary " + checkfu.Quote(src), Err: err}
		}
		for d := filepath.Dir(dst); d != "/"; d = filepath.Dir(d) {
			if _, ok := files[d]; !ok {
				files[d] = rootFile{dir: true, mode: 0o755}
			}
		}
		files[dst] = rootFile{mode: 0o755, data: data}
	}
	return nil
}

// BusyboxImage builds (or finds in the engine, by content) a minimal
// image without a registry: Debian's busybox-static (fetched with
// `apt-get download` into the cache unless already there, unpacked with
// `dpkg -x`), every applet linked, /etc/passwd and /etc/group with root
// and nobody (65534), /tmp mode 1777, plus opts.Binaries. CMD is
// /bin/sh. It returns the image reference, PREFIX-busybox:HASH (PREFIX
// is Options.NamePrefix, checkfu by default).
func (e *Engine) BusyboxImage(ctx context.Context, opts ImageOptions) (string, error) {
	busybox, err := busyboxBinary(ctx, opts.CacheDir)
	if err != nil {
		return "", err
	}
	applets, err := exec.CommandContext(ctx, busybox, "--list-full").Output()
	if err != nil {
		return "", &checkfu.Refusal{Code: CodeImageBuildFailed, Message: "docker: listing busybox applets", Err: err}
	}
	data, err := os.ReadFile(busybox)
	if err != nil {
		return "", &checkfu.Refusal{Code: CodeImageBuildFailed, Message: "docker: reading busybox", Err: err}
	}
	files := map[string]rootFile{"/bin/busybox": {mode: 0o755, data: data}}
	for _, d := range []string{"/bin", "/sbin", "/usr", "/usr/bin", "/usr/sbin", "/etc", "/proc", "/sys", "/dev", "/root", "/workspace"} {
		files[d] = rootFile{dir: true, mode: 0o755}
	}
	files["/workspace"] = rootFile{dir: true, mode: 0o755, uid: 65534, gid: 65534}
	files["/tmp"] = rootFile{dir: true, mode: 0o1777}
	files["/etc/passwd"] = rootFile{mode: 0o644, data: []byte("root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n")}
	files["/etc/group"] = rootFile{mode: 0o644, data: []byte("root:x:0:\nnogroup:x:65534:\n")}
	for _, a := range strings.Fields(string(applets)) {
		p := "/" + strings.TrimPrefix(a, "/")
		if _, ok := files[p]; !ok {
			files[p] = rootFile{mode: 0o777, link: "/bin/busybox"}
		}
	}
	if err := addBinaries(files, opts.Binaries); err != nil {
		return "", err
	}
	tarball, err := tarOf(files)
	if err != nil {
		return "", err
	}
	return e.importCached(ctx, e.prefix+"-busybox", tarball, []string{`CMD ["/bin/sh"]`})
}

// GuardImage builds (or finds, by content) the guard image: nothing but
// checkfuBinary, a static `CGO_ENABLED=0 go build -trimpath ./cmd/checkfu`
// ([BuildStatic]), at /checkfu, with ENTRYPOINT ["/checkfu", "guard"]
// and user 65534. It returns PREFIX-guard:HASH.
func (e *Engine) GuardImage(ctx context.Context, checkfuBinary string) (string, error) {
	files := map[string]rootFile{"/tmp": {dir: true, mode: 0o1777}, "/etc": {dir: true, mode: 0o755}}
	if err := addBinaries(files, map[string]string{"/checkfu": checkfuBinary}); err != nil {
		return "", err
	}
	files["/etc/passwd"] = rootFile{mode: 0o644, data: []byte("nobody:x:65534:65534:nobody:/nonexistent:/bin/false\n")}
	tarball, err := tarOf(files)
	if err != nil {
		return "", err
	}
	return e.importCached(ctx, e.prefix+"-guard", tarball, []string{`ENTRYPOINT ["/checkfu", "guard"]`, "USER 65534:65534"})
}

// BuildStatic builds the Go package pkg (such as "./cmd/checkfu") of the
// module at moduleDir into out as a static binary: CGO_ENABLED=0,
// -trimpath, GOOS=linux.
func BuildStatic(ctx context.Context, moduleDir, pkg, out string) error {
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", out, pkg)
	cmd.Dir = moduleDir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux")
	if msg, err := cmd.CombinedOutput(); err != nil {
		return &checkfu.Refusal{Code: CodeImageBuildFailed, Message: "docker: go build " + pkg + ": " + checkfu.Quote(strings.TrimSpace(string(msg))), Err: err}
	}
	return nil
}

// busyboxBinary returns the path of a static busybox unpacked from
// Debian's busybox-static in the cache directory, downloading the package
// when the cache has none.
func busyboxBinary(ctx context.Context, cacheDir string) (string, error) {
	if cacheDir == "" {
		d, err := os.UserCacheDir()
		if err != nil {
			return "", &checkfu.Refusal{Code: CodeImageBuildFailed, Message: "docker: no cache directory", Err: err}
		}
		cacheDir = filepath.Join(d, "checkfu", "docker")
	}
	bin := filepath.Join(cacheDir, "rootfs", "bin", "busybox")
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	if err := os.MkdirAll(cacheDir, 0o755); err != nil {
		return "", &checkfu.Refusal{Code: CodeImageBuildFailed, Message: "docker: creating the cache directory", Err: err}
	}
	debs, _ := filepath.Glob(filepath.Join(cacheDir, "busybox-static_*.deb"))
	if len(debs) == 0 {
		cmd := exec.CommandContext(ctx, "apt-get", "download", "busybox-static")
		cmd.Dir = cacheDir
		if msg, err := cmd.CombinedOutput(); err != nil {
			return "", &checkfu.Refusal{Code: CodeImageBuildFailed, Message: "docker: apt-get download busybox-static: " + checkfu.Quote(strings.TrimSpace(string(msg))), Err: err}
		}
		debs, _ = filepath.Glob(filepath.Join(cacheDir, "busybox-static_*.deb"))
		if len(debs) == 0 {
			return "", checkfu.Refuse(CodeImageBuildFailed, "docker: apt-get download left no busybox-static package")
		}
	}
	tmp, err := os.MkdirTemp(cacheDir, "rootfs-")
	if err != nil {
		return "", &checkfu.Refusal{Code: CodeImageBuildFailed, Message: "docker: unpacking busybox-static", Err: err}
	}
	defer os.RemoveAll(tmp)
	if msg, err := exec.CommandContext(ctx, "dpkg", "-x", debs[0], tmp).CombinedOutput(); err != nil {
		return "", &checkfu.Refusal{Code: CodeImageBuildFailed, Message: "docker: dpkg -x busybox-static: " + checkfu.Quote(strings.TrimSpace(string(msg))), Err: err}
	}
	if _, err := os.Stat(filepath.Join(tmp, "bin", "busybox")); err != nil {
		return "", &checkfu.Refusal{Code: CodeImageBuildFailed, Message: "docker: busybox-static holds no bin/busybox", Err: err}
	}
	// Publish the unpacked tree atomically; a concurrent builder that won
	// the race leaves its own, equivalent tree.
	if err := os.Rename(tmp, filepath.Join(cacheDir, "rootfs")); err != nil && !errors.Is(err, fs.ErrExist) {
		if _, serr := os.Stat(bin); serr != nil {
			return "", &checkfu.Refusal{Code: CodeImageBuildFailed, Message: "docker: caching busybox", Err: err}
		}
	}
	return bin, nil
}
