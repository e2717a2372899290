package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/acp/wire"
)

func init() {
	register(&command{
		name:    "process",
		summary: "serve one process over the openProcess wire, or attach to one",
		run: func(e *env, args []string) error {
			return subcommands(e, "process", args, map[string]func(*env, []string) error{
				"serve":  runProcessServe,
				"attach": runProcessAttach,
			})
		},
	})
}

// exitOutputTruncated is the status of "process attach" when the provider
// refused its resume with output_truncated (the process was terminated).
const exitOutputTruncated = 3

// exitInterrupted is the status of "process attach" stopped by a signal.
const exitInterrupted = 130

// splitAddr maps the ADDR of -listen and -connect to a network and an
// address: "unix:/path" is a Unix socket, anything else host:port TCP.
func splitAddr(addr string) (network, address string) {
	if path, ok := strings.CutPrefix(addr, "unix:"); ok {
		return "unix", path
	}
	return "tcp", addr
}

// displayAddr is the listener's address in the form -connect accepts.
func displayAddr(ln net.Listener) string {
	if ln.Addr().Network() == "unix" {
		return "unix:" + ln.Addr().String()
	}
	return ln.Addr().String()
}

// parseBytes parses a byte count: digits, optionally followed by K, KiB,
// M, MiB, G or GiB (all binary multiples).
func parseBytes(s string) (int, error) {
	num := strings.TrimRight(s, "KMGiB")
	mult := map[string]int{"": 1, "K": 1 << 10, "KiB": 1 << 10, "M": 1 << 20, "MiB": 1 << 20, "G": 1 << 30, "GiB": 1 << 30}[s[len(num):]]
	n, err := strconv.Atoi(num)
	if err != nil || mult == 0 || n < 0 || n > (1<<31)/mult {
		return 0, fmt.Errorf("%q is not a byte count (want digits with an optional K, KiB, M, MiB, G or GiB suffix)", s)
	}
	return n * mult, nil
}

// listFlag is a repeatable string flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

// authFlags are the authentication flags serve and attach share.
type authFlags struct {
	key      *string
	peers    listFlag
	insecure *bool
}

func addAuthFlags(fs *flag.FlagSet, peer string) *authFlags {
	a := &authFlags{}
	a.key = fs.String("key", "", "`KEY.pem`: this side's PKCS#8 PEM Ed25519 private key (\"checkfu attester keygen\" makes one); required over TCP")
	fs.Var(&a.peers, "peer", "`PUB.pem`: the "+peer+"'s PEM public key to accept (repeatable); required with -key")
	a.insecure = fs.Bool("insecure-no-auth", false, "speak the wire without authentication or encryption: whoever connects first owns the process")
	return a
}

// keys loads the flags' keys: nil over a Unix socket without -key (the
// peer's uid authenticates it), or with -insecure-no-auth.
func (a *authFlags) keys(network string) (*wire.Keys, error) {
	switch {
	case *a.insecure && (*a.key != "" || len(a.peers) != 0):
		return nil, usagef("-insecure-no-auth takes no -key or -peer")
	case *a.insecure:
		return nil, nil
	case *a.key == "" && len(a.peers) == 0 && network == "unix":
		return nil, nil
	case *a.key == "" || len(a.peers) == 0:
		return nil, usagef("over TCP give -key KEY.pem and at least one -peer PUB.pem (or -insecure-no-auth)")
	}
	priv, err := readKeyFile("-key", *a.key, true, maxWireKeyFile)
	if err != nil {
		return nil, withHint(err, "-key must name this user's PKCS#8 PEM Ed25519 private key, readable and writable by this user alone (chmod 600 KEY.pem), as made by \"checkfu attester keygen\"")
	}
	var peers [][]byte
	for _, p := range a.peers {
		b, err := readKeyFile("-peer", p, false, maxWireKeyFile)
		if err != nil {
			return nil, withHint(err, "-peer must name this user's file holding the other side's PEM public key, writable by this user alone (chmod go-w PUB.pem)")
		}
		peers = append(peers, b)
	}
	k, err := wire.NewKeys(priv, peers...)
	if err != nil {
		return nil, withHint(err, "-key takes a PKCS#8 PEM Ed25519 private key and -peer a PKIX PEM public key, as \"checkfu attester keygen\" prints")
	}
	return k, nil
}

// maxWireKeyFile bounds what readKeyFile reads: a PEM key is well under it.
const maxWireKeyFile = 1 << 20

func runProcessServe(e *env, args []string) error {
	fs := newFlagSet(e, "process serve", "-listen ADDR [-key KEY.pem -peer PUB.pem | -insecure-no-auth] [-output-window BYTES] [-input-credit BYTES] -- CMD ARGS...")
	listen := fs.String("listen", "", "`address` to listen on: host:port (port 0 picks one) or unix:/path")
	auth := addAuthFlags(fs, "runner")
	window := fs.String("output-window", "8MiB", "output_window_bytes: the stdout replay journal, `bytes` (suffix K/KiB, M/MiB, G/GiB)")
	credit := fs.String("input-credit", "1MiB", "stdin credit the provider buffers beyond the pipe, `bytes`")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *listen == "" || fs.NArg() == 0 {
		return usagef("checkfu process serve needs -listen ADDR and a command after --")
	}
	w, err := parseBytes(*window)
	if err != nil {
		return usagef("-output-window: %v", err)
	}
	c, err := parseBytes(*credit)
	if err != nil {
		return usagef("-input-credit: %v", err)
	}
	network, address := splitAddr(*listen)
	keys, err := auth.keys(network)
	if err != nil {
		return err
	}
	argv := fs.Args()
	if _, err := exec.LookPath(argv[0]); err != nil {
		return withHint(err, "give serve a command it can run, after --")
	}
	srv := &wire.Server{
		Command:        func() *exec.Cmd { return exec.Command(argv[0], argv[1:]...) },
		OutputWindow:   w,
		InputCredit:    c,
		Keys:           keys,
		InsecureNoAuth: *auth.insecure,
	}
	ln, err := wire.Listen(network, address)
	if err != nil {
		return withHint(err, "pass -listen a free loopback address such as 127.0.0.1:0")
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	fmt.Fprintf(e.stdout, "listening on %s\n", displayAddr(ln))
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case <-srv.Done(): // the process exited and its runner collected it
	case <-ctx.Done():
	case err = <-served:
	}
	srv.Close()
	switch {
	case err == nil:
		return nil
	case errors.Is(err, checkfu.CodeConfigInvalid):
		return withHint(err, "check -output-window and -input-credit: each must be between 4KiB and 1GiB")
	}
	return withHint(err, "the listener failed while serving; run serve again (a runner resumes only against the same serve)")
}

func runProcessAttach(e *env, args []string) error {
	fs := newFlagSet(e, "process attach", "-connect ADDR [-key KEY.pem -peer PUB.pem | -insecure-no-auth]")
	connect := fs.String("connect", "", "`address` of \"checkfu process serve\": host:port or unix:/path")
	auth := addAuthFlags(fs, "provider")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *connect == "" || fs.NArg() != 0 {
		return usagef("checkfu process attach needs -connect ADDR and no arguments")
	}
	network, addr := splitAddr(*connect)
	keys, err := auth.keys(network)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	r := &wire.Runner{
		Dial: func(ctx context.Context) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		},
		Keys:           keys,
		InsecureNoAuth: *auth.insecure,
		Stdin:          e.stdin,
		Stdout:         e.stdout,
		Stderr:         e.stderr,
	}
	status, err := r.Run(ctx)
	if n := r.StderrDropped(); n > 0 {
		fmt.Fprintf(e.stderr, "checkfu: %d bytes of the process's stderr were dropped (stderr is best effort)\n", n)
	}
	switch {
	case err == nil:
		return attachExit(status)
	case errors.Is(err, wire.CodeOutputTruncated):
		return exitError{code: exitOutputTruncated, msg: err.Error() + "\ncode: " + string(wire.CodeOutputTruncated)}
	case ctx.Err() != nil:
		return exitError{code: exitInterrupted, msg: "interrupted"}
	case errors.Is(err, wire.CodePeerRefused):
		return withHint(err, "pin the provider's public key with -peer, and give serve this side's public key with its -peer")
	}
	if _, ok := checkfu.CodeOf(err); ok {
		return err
	}
	return withHint(err, "check that \"checkfu process serve\" is listening at -connect")
}

// attachExit is attach's result for the exit status the provider
// reported for the process: 0 is success and 1 to 255 are passed
// through. Any other status (the provider's frame carries an int32, and
// the parent keeps only the low 8 bits of an exit status, so 256 would
// read as success) is exitFailed, naming the status.
func attachExit(status int) error {
	switch {
	case status == 0:
		return nil
	case status >= 1 && status <= 255:
		return exitError{code: status}
	}
	return exitError{code: exitFailed, msg: fmt.Sprintf("checkfu process attach: the provider reported exit status %d, outside 0-255", status)}
}
