package jail

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/checkfu/checkfu/adapters"
	"github.com/checkfu/checkfu/adapters/internal/deadowner"
)

// cgroupRoot is where the cgroup v1 hierarchies are mounted, and
// cgroupPrefix the name of the directory, in each, the jails of one
// Runner make their groups in: the prefix and the Runner's owner name
// (its pid and PID namespace, see deadowner). A Runner's parent is its
// own, so it can remove it when its last instance stops, and a dead
// Runner's is known by its name.
const (
	cgroupRoot   = "/sys/fs/cgroup"
	cgroupPrefix = "checkfu-jail-"
	cfsPeriod    = 100000 // microseconds
)

// cgroupParent is this Runner's parent group name.
var cgroupParent = cgroupPrefix + deadowner.Self()

// controllers are the v1 hierarchies a jail's limits need.
var controllers = []string{"memory", "pids", "cpu"}

// cgroupsWritable reports whether a group can be made in each
// controller, and memory accounts swap (or the host has none). It
// first sweeps the groups, the bounded workspaces and the guard socket
// directories a dead Runner left ([sweepOrphans], [sweepWorkspaces],
// [sweepGuardDirs]).
func cgroupsWritable() bool {
	sweepOrphans()
	sweepWorkspaces()
	sweepGuardDirs()
	for _, c := range controllers {
		dir := filepath.Join(cgroupRoot, c, cgroupParent)
		if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
			return false
		}
		probe := filepath.Join(dir, "probe-"+randomName())
		if err := os.Mkdir(probe, 0o755); err != nil {
			removeParents()
			return false
		}
		os.Remove(probe)
	}
	removeParents()
	if _, err := os.Stat(filepath.Join(cgroupRoot, "memory", "memory.memsw.limit_in_bytes")); err != nil && swapTotal() != 0 {
		return false
	}
	return true
}

func swapTotal() int64 {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return -1
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "SwapTotal:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	return -1
}

// sweepOrphans removes the parents, and the groups in them, of dead
// Runners: a Runner killed outright never stops its instances, and the
// parent-death signal ends its jails but cannot remove their groups.
// Only a parent whose owner is dead is touched ([deadowner.Dead]: of
// this PID namespace, and no process has its pid there): a Runner of
// another PID namespace sharing the cgroup tree keeps its groups. A
// group that still holds a process cannot be removed (the kernel
// refuses), so a live jail under a reused pid keeps its group.
func sweepOrphans() {
	for _, ctrl := range controllers {
		root := filepath.Join(cgroupRoot, ctrl)
		ents, _ := os.ReadDir(root)
		for _, e := range ents {
			owner, ok := strings.CutPrefix(e.Name(), cgroupPrefix)
			if !ok || !e.IsDir() || !deadowner.Dead(owner) {
				continue
			}
			dir := filepath.Join(root, e.Name())
			groups, _ := os.ReadDir(dir)
			for _, g := range groups {
				if g.IsDir() {
					os.Remove(filepath.Join(dir, g.Name()))
				}
			}
			os.Remove(dir)
		}
	}
}

// A cgroup is one jail's group in each controller.
type cgroup struct {
	name string
}

func (c *cgroup) dir(ctrl string) string {
	return filepath.Join(cgroupRoot, ctrl, cgroupParent, c.name)
}

// parentRetries bounds how often newCgroup makes a controller's parent
// again when another instance's [removeParents], in this Runner,
// removed it between the two mkdirs.
const parentRetries = 8

// newCgroup makes the groups for name (and their parents, which the
// last instance to stop removes) and writes l into them.
func newCgroup(name string, l adapters.Limits) (*cgroup, error) {
	c := &cgroup{name: name}
	// The kernel takes milliseconds per cgroup v1 mkdir: the controllers
	// are made side by side.
	errs := make([]error, len(controllers))
	var wg sync.WaitGroup
	for k, ctrl := range controllers {
		wg.Go(func() {
			for try := 0; try < parentRetries; try++ {
				if errs[k] = os.Mkdir(filepath.Dir(c.dir(ctrl)), 0o755); errs[k] != nil && !errors.Is(errs[k], os.ErrExist) {
					return
				}
				if errs[k] = os.Mkdir(c.dir(ctrl), 0o755); !errors.Is(errs[k], os.ErrNotExist) {
					return
				}
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		c.remove()
		return nil, err
	}
	writes := []struct{ ctrl, file, v string }{
		{"memory", "memory.limit_in_bytes", strconv.FormatInt(l.MemoryBytes, 10)},
		{"memory", "memory.memsw.limit_in_bytes", strconv.FormatInt(l.MemoryBytes, 10)},
		{"pids", "pids.max", strconv.FormatInt(l.Pids, 10)},
		{"cpu", "cpu.cfs_period_us", strconv.Itoa(cfsPeriod)},
		{"cpu", "cpu.cfs_quota_us", strconv.FormatInt(quota(l.NanoCPUs), 10)},
	}
	for _, w := range writes {
		p := filepath.Join(c.dir(w.ctrl), w.file)
		if w.file == "memory.memsw.limit_in_bytes" {
			if _, err := os.Stat(p); err != nil && swapTotal() == 0 {
				continue // no swap to account
			}
		}
		if err := os.WriteFile(p, []byte(w.v), 0); err != nil {
			c.remove()
			return nil, fmt.Errorf("cgroup %s: %w", w.file, err)
		}
	}
	return c, nil
}

func quota(nanoCPUs int64) int64 { return nanoCPUs * cfsPeriod / 1_000_000_000 }

// taskFiles opens the tasks file of each group, in the order of
// controllers, for the init stage to move its own thread in (see
// initstage.joinCgroups). The caller closes them once the init stage holds them.
//
// The init stage moves itself, not the Runner it: the kernel migrates
// a process another process names (cgroup.procs, or tasks with a
// thread id) under the global threadgroup lock, whose write side waits
// out an RCU grace period when no migration ran just before, about
// 15 ms on this kind of machine; a thread that writes 0 (itself) to
// tasks skips that lock. The kernel checks the credentials the file was
// opened with, the Runner's, so the jail's identity needs no right on
// the groups. Other threads of the init stage stay where they were
// until the exec ends them: the thread that execs is the one moved, and
// the read-back checks that thread.
func (c *cgroup) taskFiles() ([]*os.File, error) {
	var fs []*os.File
	for _, ctrl := range controllers {
		f, err := os.OpenFile(filepath.Join(c.dir(ctrl), "tasks"), os.O_WRONLY, 0)
		if err != nil {
			for _, f := range fs {
				f.Close()
			}
			return nil, fmt.Errorf("cgroup %s: %w", ctrl, err)
		}
		fs = append(fs, f)
	}
	return fs, nil
}

// limits reads the limits back from the groups, as [adapters.Limits]:
// a memory limit that differs from memsw (where swap is accounted)
// reads as none.
func (c *cgroup) limits() adapters.Limits {
	read := func(ctrl, file string) int64 {
		b, err := os.ReadFile(filepath.Join(c.dir(ctrl), file))
		if err != nil {
			return -1
		}
		n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if err != nil {
			return -1
		}
		return n
	}
	var l adapters.Limits
	mem := read("memory", "memory.limit_in_bytes")
	if sw := read("memory", "memory.memsw.limit_in_bytes"); sw == mem || (sw == -1 && swapTotal() == 0) {
		l.MemoryBytes = mem
	}
	l.Pids = read("pids", "pids.max")
	if q, p := read("cpu", "cpu.cfs_quota_us"), read("cpu", "cpu.cfs_period_us"); q > 0 && p > 0 {
		l.NanoCPUs = q * 1_000_000_000 / p
	}
	return l
}

// holds reports whether the kernel lists the thread whose /proc
// directory is task in every group.
func (c *cgroup) holds(task string) bool {
	b, err := os.ReadFile(task + "/cgroup")
	if err != nil {
		return false
	}
	want := "/" + cgroupParent + "/" + c.name
	found := 0
	for _, l := range strings.Split(string(b), "\n") {
		parts := strings.SplitN(l, ":", 3)
		if len(parts) != 3 || parts[2] != want {
			continue
		}
		for _, ctrl := range strings.Split(parts[1], ",") {
			for _, w := range controllers {
				if ctrl == w {
					found++
				}
			}
		}
	}
	return found == len(controllers)
}

// remove removes the groups, retrying while the kernel still counts
// the exiting processes.
func (c *cgroup) remove() {
	for _, ctrl := range controllers {
		for i := 0; i < 50; i++ {
			err := os.Remove(c.dir(ctrl))
			if err == nil || errors.Is(err, os.ErrNotExist) {
				break
			}
			time.Sleep(2 * time.Millisecond)
		}
	}
}

// removeParents removes this Runner's parent group of each controller
// where it holds no group any more: the kernel refuses to remove one
// that does (another live jail's), which is then left to the instance
// that stops last.
func removeParents() {
	for _, ctrl := range controllers {
		os.Remove(filepath.Join(cgroupRoot, ctrl, cgroupParent))
	}
}
