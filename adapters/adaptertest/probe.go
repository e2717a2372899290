package adaptertest

import (
	"fmt"
	"io"
	"net"
	"os"
	"time"
)

// The probe's exit statuses.
const (
	// ProbeOK: the probe did what it was asked (dial: connected).
	ProbeOK = 0
	// ProbeFailed: the dial failed, or the self-test could not open a
	// loopback socket.
	ProbeFailed = 1
	// ProbeUsage: the probe was called wrong.
	ProbeUsage = 2
)

// RunProbe is the network probe the suite runs inside an instance to
// check capability honesty. args is one of:
//
//	dial HOST:PORT   connect over TCP within 3 s: ProbeOK when connected, ProbeFailed when not
//	interfaces       print, one a line, each interface that is up, not loopback and has an address
//	selftest         listen on 127.0.0.1 and dial it: ProbeOK when sockets work at all
//
// It writes to w and returns the exit status. Ship it in the instance's
// image as a static binary (package adaptertest/probe), or, for a
// provider that runs host processes, call [ProbeMain] from TestMain and
// give the test binary as the probe.
func RunProbe(args []string, w io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(w, "usage: probe dial HOST:PORT | interfaces | selftest")
		return ProbeUsage
	}
	switch {
	case args[0] == "dial" && len(args) == 2:
		c, err := net.DialTimeout("tcp", args[1], 3*time.Second)
		if err != nil {
			fmt.Fprintln(w, "dial failed:", err)
			return ProbeFailed
		}
		c.Close()
		fmt.Fprintln(w, "connected")
		return ProbeOK
	case args[0] == "interfaces" && len(args) == 1:
		ifs, err := net.Interfaces()
		if err != nil {
			fmt.Fprintln(w, "interfaces:", err)
			return ProbeFailed
		}
		for _, i := range ifs {
			if i.Flags&net.FlagUp == 0 || i.Flags&net.FlagLoopback != 0 {
				continue
			}
			if addrs, err := i.Addrs(); err == nil && len(addrs) > 0 {
				fmt.Fprintln(w, i.Name)
			}
		}
		return ProbeOK
	case args[0] == "selftest" && len(args) == 1:
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			fmt.Fprintln(w, "listen:", err)
			return ProbeFailed
		}
		defer ln.Close()
		c, err := net.DialTimeout("tcp", ln.Addr().String(), 3*time.Second)
		if err != nil {
			fmt.Fprintln(w, "dial:", err)
			return ProbeFailed
		}
		c.Close()
		return ProbeOK
	}
	fmt.Fprintln(w, "usage: probe dial HOST:PORT | interfaces | selftest")
	return ProbeUsage
}

// ProbeArg is the first argument that makes [ProbeMain] act as the
// probe.
const ProbeArg = "checkfu-adaptertest-probe"

// ProbeMain makes the current binary act as the probe when its first
// argument is [ProbeArg]: it runs [RunProbe] on the rest and exits. Call
// it first thing in TestMain; the probe argv is then
// [os.Executable(), ProbeArg].
func ProbeMain() {
	if len(os.Args) > 1 && os.Args[1] == ProbeArg {
		os.Exit(RunProbe(os.Args[2:], os.Stdout))
	}
}
