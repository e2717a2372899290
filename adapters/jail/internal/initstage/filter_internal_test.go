//go:build linux && amd64

package initstage

import (
	"encoding/binary"
	"testing"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// auditArchI386 is AUDIT_ARCH_I386: the arch of a call made through
// int 0x80 on x86_64.
const auditArchI386 = 0x40000003

// runFilter runs the jail's filter on the struct seccomp_data of a call
// (number nr of architecture arch, first argument arg0) and returns its
// verdict. x/net/bpf's machine loads words in network order, so the
// fields are written big-endian here; the kernel reads them natively.
func runFilter(t *testing.T, arch, nr uint32, arg0 uint32) uint32 {
	t.Helper()
	f, err := filter()
	if err != nil {
		t.Fatal(err)
	}
	raw := make([]bpf.RawInstruction, len(f))
	for i, in := range f {
		raw[i] = bpf.RawInstruction{Op: in.Code, Jt: in.Jt, Jf: in.Jf, K: in.K}
	}
	prog, ok := bpf.Disassemble(raw)
	if !ok {
		t.Fatal("the filter does not disassemble")
	}
	vm, err := bpf.NewVM(prog)
	if err != nil {
		t.Fatal(err)
	}
	data := make([]byte, 64) // struct seccomp_data
	binary.BigEndian.PutUint32(data[offNr:], nr)
	binary.BigEndian.PutUint32(data[offArch:], arch)
	binary.BigEndian.PutUint32(data[offArg0:], arg0)
	v, err := vm.Run(data)
	if err != nil {
		t.Fatal(err)
	}
	return uint32(v)
}

// TestFilterKillsOtherArchitectures runs the filter itself on calls of
// the i386 ABI: every one kills the process, whatever its number (26,
// i386 ptrace, is x86_64 msync, which the filter allows). A host whose
// kernel refuses i386 calls outright cannot show this in a jail; this
// shows it everywhere.
func TestFilterKillsOtherArchitectures(t *testing.T) {
	for nr := uint32(0); nr < 512; nr++ {
		if v := runFilter(t, auditArchI386, nr, 0); v != retKill {
			t.Fatalf("i386 call %d: verdict %#x, want kill (%#x)", nr, v, retKill)
		}
	}
	if v := runFilter(t, 0, 26, 0); v != retKill {
		t.Errorf("a call of no architecture: verdict %#x, want kill", v)
	}
}

// TestFilterVerdicts holds the filter's other verdicts to what its
// documentation says, on the filter itself.
func TestFilterVerdicts(t *testing.T) {
	tests := []struct {
		name     string
		nr, arg0 uint32
		want     uint32
	}{
		{"msync", unix.SYS_MSYNC, 0, retAllow},
		{"ptrace", unix.SYS_PTRACE, 0, retEPERM},
		{"unshare", unix.SYS_UNSHARE, 0, retEPERM},
		{"an x32 call", x32Bit | unix.SYS_MSYNC, 0, retEPERM},
		{"clone3", unix.SYS_CLONE3, 0, retNoSys},
		{"clone of a thread", unix.SYS_CLONE, unix.CLONE_VM | unix.CLONE_THREAD, retAllow},
		{"clone of a user namespace", unix.SYS_CLONE, unix.CLONE_NEWUSER, retEPERM},
		{"an IPv4 socket", unix.SYS_SOCKET, unix.AF_INET, retAllow},
		{"a packet socket", unix.SYS_SOCKET, unix.AF_PACKET, retNoAF},
	}
	for _, tt := range tests {
		if v := runFilter(t, auditArch, tt.nr, tt.arg0); v != tt.want {
			t.Errorf("%s: verdict %#x, want %#x", tt.name, v, tt.want)
		}
	}
}
