// Command checkfu is the command-line face of the checkfu packages.
//
// Usage:
//
//	checkfu <command> [subcommand] [flags] [args]
//
// Run "checkfu -h" for the list of commands and "checkfu <command> -h" for
// one command's flags. Exit status: 0 on success, 1 on a refusal or a
// failed check, 2 on a usage error.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"
	"syscall"
	"time"
	"unicode"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/adapters/jail"
	"golang.org/x/sys/unix"
)

// Exit statuses shared by every subcommand.
const (
	exitOK     = 0
	exitFailed = 1 // a refusal or a failed check
	exitUsage  = 2 // the command line itself is wrong
)

// An env is what a command may touch of the outside world. Tests build one
// with buffers; main builds one from the process.
type env struct {
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	getenv func(string) string
}

// A command is one top-level word of the CLI. Each command lives in its own
// file and adds itself to commands from an init function.
type command struct {
	name    string
	summary string // one line, lower case, no final period
	// run executes the command with the arguments after its name. It
	// returns nil on success, a usageError for a bad command line, an
	// exitError to choose the status itself, and any other error (a
	// *checkfu.Refusal included) for a refusal or failed check.
	run func(e *env, args []string) error
}

var commands = map[string]*command{}

// register adds c to the command table. It panics on a duplicate name,
// which is a programming error caught by any test run.
func register(c *command) {
	if _, dup := commands[c.name]; dup {
		panic("checkfu: duplicate command " + c.name)
	}
	commands[c.name] = c
}

// A usageError reports a wrong command line; it exits with status 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

// usagef returns a usageError with a formatted message, through
// textLine: the arguments are the command line's, a stray argument of
// any length included, so the line is bounded here, once.
func usagef(format string, args ...any) error {
	return usageError{textLine(fmt.Sprintf(format, args...))}
}

// An exitError carries an exact exit status, for commands such as
// "process attach" that pass a child's status through. A non-empty msg is
// printed as an error line first.
type exitError struct {
	code int
	msg  string
}

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// A hinted error adds a "hint:" line telling the user what to do.
type hinted struct {
	err  error
	hint string
}

func (h hinted) Error() string { return h.err.Error() }
func (h hinted) Unwrap() error { return h.err }

// withHint wraps err so that the CLI prints hint after it.
func withHint(err error, hint string) error {
	if err == nil {
		return nil
	}
	return hinted{err, hint}
}

// newFlagSet returns a flag set for "checkfu NAME" that writes its usage
// to e.stderr and returns errors instead of exiting. Its own output is
// discarded: the flag package prints a bad flag's error with the flag's
// name and value as given, control characters and all, and at any
// length; parseFlags reports it instead, through textLine.
func newFlagSet(e *env, name, usage string) *flag.FlagSet {
	fs := flag.NewFlagSet("checkfu "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {
		fmt.Fprintf(e.stderr, "usage: checkfu %s %s\n", name, usage)
		if hasFlags(fs) {
			fmt.Fprintln(e.stderr, "\nflags:")
			fs.SetOutput(e.stderr)
			fs.PrintDefaults()
			fs.SetOutput(io.Discard)
		}
	}
	return fs
}

func hasFlags(fs *flag.FlagSet) bool {
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	return n > 0
}

// parseFlags parses args with fs. It maps -h to errHelp (exit 0 after the
// usage text) and any other flag error to a usageError, its text through
// textLine: the error names the bad flag and value as given, and the
// command line may hold terminal control (-$'\x1b]0;title\a') or be of
// any size.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return errHelp
		}
		return usageError{textLine(err.Error())}
	}
	return nil
}

// maxInputWait bounds the time the CLI waits for a file input (a key,
// checkpoint, policy, receipt or document named by a flag or an
// argument) to be read to its end. A FIFO whose writer never comes, or a
// pipe or FIFO that never sends a byte, or sends some and stalls, is
// refused (config_invalid) once it has passed, instead of holding the
// command for ever. It bounds the whole read, not the wait for each
// byte, so a writer cannot stretch it by trickling; 30 s leaves a
// secrets agent or a -key-file <(...) command ample time to answer.
//
// Only what Go's poller can wait on gets the deadline: pipes, FIFOs,
// terminals. A regular file or a device such as /dev/zero is not
// pollable (SetReadDeadline reports os.ErrNoDeadline); its reads never
// wait for a writer, so it needs none, and the size bound ends it.
const maxInputWait = 30 * time.Second

// inputWait is maxInputWait; tests shorten it to reach its edge quickly.
var inputWait = maxInputWait

// openInput opens the file input at path for reading without blocking:
// a FIFO's open(2) otherwise waits, beyond any deadline, for a writer
// that may never come. readInput then waits for the writer, within
// inputWait.
func openInput(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}

// errInputStalled is readInput's error for an input whose end did not
// come within inputWait.
var errInputStalled = errors.New("stalled")

// readInput reads f, opened by openInput, to its end, or its first
// limit+1 bytes, within inputWait; past it, errInputStalled.
func readInput(f *os.File, limit int64) ([]byte, error) {
	if err := f.SetReadDeadline(time.Now().Add(inputWait)); err != nil && !errors.Is(err, os.ErrNoDeadline) {
		return nil, err
	}
	if err := awaitWriter(f); err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			err = errInputStalled
		}
		return nil, err
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		clear(b)
		if errors.Is(err, os.ErrDeadlineExceeded) {
			err = errInputStalled
		}
		return nil, err
	}
	return b, nil
}

// awaitWriter waits, within f's read deadline, until a FIFO opened
// without blocking has something to read or its writer has come and
// gone. Opened so, a FIFO with no writer yet reads as empty at once; as
// os.Open would, this waits for the writer instead (a secrets agent
// that writes when the FIFO is opened), but not for ever. Anything but a
// FIFO returns at once.
func awaitWriter(f *os.File) error {
	fi, err := f.Stat()
	if err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		return err
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	return rc.Read(func(fd uintptr) bool {
		// poll, unlike read, reports no end before a writer has come:
		// POLLHUP comes only once a writer has closed.
		p := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, err := unix.Poll(p, 0)
		return err != nil || n > 0
	})
}

// readBounded reads the file at path, named by flag, to its end and
// refuses it (config_invalid) when it holds more than limit bytes. It
// reads at most limit+1 bytes, so a device (/dev/zero) or a pipe that
// never ends is refused at once, not read into memory until it is
// exhausted; and it waits at most maxInputWait for the end.
func readBounded(flag, path string, limit int64) ([]byte, error) {
	f, err := openInput(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readOpened(f, flag, path, limit)
}

// readOpened reads f, the file at path named by flag, as readBounded
// does: at most limit+1 bytes, refused when over limit, and refused when
// its end has not come within inputWait.
func readOpened(f *os.File, flag, path string, limit int64) ([]byte, error) {
	b, err := readInput(f, limit)
	if errors.Is(err, errInputStalled) {
		return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "checkfu: %s file %s sent no end within %v", flag, checkfu.Quote(path), inputWait)
	}
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		clear(b)
		return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "checkfu: %s file %s is larger than %d bytes", flag, checkfu.Quote(path), limit)
	}
	return b, nil
}

// keyFileUser is the uid whose key files readKeyFile accepts (tests
// replace it to act as another user without root).
var keyFileUser = os.Getuid

// readKeyFile reads the key file named by flag, of at most limit bytes,
// refusing it (config_invalid), as ssh does, when other users may write
// it (whoever can write pinned public keys pins its own), or, for a
// private key, read it, and when it is owned by a user other than this
// one or root. The mode is read from the opened file, so the check and
// the read see the same file; a pipe (-key-file <(...)) is this user's
// and mode 0600, and passes.
func readKeyFile(flag, path string, private bool, limit int64) ([]byte, error) {
	f, err := openInput(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	forbidden, may := os.FileMode(0o022), "write"
	if private {
		forbidden, may = 0o077, "read or write"
	}
	if perm := fi.Mode().Perm(); perm&forbidden != 0 {
		return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "checkfu: %s file %s has mode %#o: other users may %s it", flag, checkfu.Quote(path), perm, may)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Uid != 0 && int(st.Uid) != keyFileUser() {
		return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "checkfu: %s file %s is owned by uid %d, who may rewrite it; want this user (uid %d) or root", flag, checkfu.Quote(path), st.Uid, keyFileUser())
	}
	return readOpened(f, flag, path, limit)
}

// refuseEmpty returns a usage error when one of the flags names was
// given on the command line with an empty value. Such a flag would
// otherwise read as left out, and the check it asks for would be skipped
// with exit 0: a script's -evidence "$UNSET" verifying no evidence.
func refuseEmpty(fs *flag.FlagSet, names ...string) error {
	var err error
	fs.Visit(func(f *flag.Flag) {
		if err == nil && slices.Contains(names, f.Name) && f.Value.String() == "" {
			err = usagef("%s: -%s was given an empty value; leave the flag out, or give it what it names", fs.Name(), f.Name)
		}
	})
	return err
}

// textLine returns s, a line of text that may quote what a provider
// said, as it is when it holds only printable characters and spaces and
// at most checkfu.MaxCause bytes, and quoted (checkfu.Quote) otherwise,
// so that it cannot drive the terminal: no control, format (U+202E) or
// invalid character reaches it raw.
func textLine(s string) string {
	if !printable(s, checkfu.MaxCause, true) {
		return checkfu.Quote(s)
	}
	return s
}

// printable reports whether s may reach the terminal as it is: at most
// max bytes of graphic characters only (no control or format character,
// U+202E included, and no invalid UTF-8), and no space at all unless
// spaces is set.
func printable(s string, max int, spaces bool) bool {
	return len(s) <= max && strings.IndexFunc(s, func(r rune) bool {
		return !unicode.IsGraphic(r) || r == unicode.ReplacementChar || !spaces && unicode.IsSpace(r)
	}) < 0
}

// errHelp means help was asked for and printed: exit 0.
var errHelp = errors.New("help requested")

// subcommands dispatches args[0] among subs, for commands with a second
// word such as "receipt sign". Each value runs with the remaining args.
func subcommands(e *env, name string, args []string, subs map[string]func(*env, []string) error) error {
	names := make([]string, 0, len(subs))
	for n := range subs {
		names = append(names, n)
	}
	sort.Strings(names)
	if len(args) == 0 || args[0] == "-h" || args[0] == "-help" || args[0] == "--help" {
		fmt.Fprintf(e.stderr, "usage: checkfu %s <%s> [flags]\n", name, strings.Join(names, "|"))
		if len(args) == 0 {
			return usagef("checkfu %s needs a subcommand", name)
		}
		return errHelp
	}
	run, ok := subs[args[0]]
	if !ok {
		return usagef("checkfu %s: unknown subcommand %s (want one of %s)", name, checkfu.Quote(args[0]), strings.Join(names, ", "))
	}
	return run(e, args[1:])
}

func printUsage(w io.Writer) {
	fmt.Fprintln(w, "usage: checkfu <command> [flags] [args]")
	fmt.Fprintln(w, "\ncommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w, "\nRun \"checkfu <command> -h\" for a command's flags.")
}

// run executes one command line and returns the exit status.
func run(e *env, args []string) int {
	if len(args) == 0 {
		printUsage(e.stderr)
		return exitUsage
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		printUsage(e.stdout)
		return exitOK
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(e.stderr, "error: unknown command %s\n", checkfu.Quote(args[0]))
		fmt.Fprintln(e.stderr, "hint: run \"checkfu -h\" for the list of commands")
		return exitUsage
	}
	return report(e, c.run(e, args[1:]))
}

// report prints err in the CLI's one format and maps it to an exit status.
func report(e *env, err error) int {
	if err == nil || errors.Is(err, errHelp) {
		return exitOK
	}
	var ee exitError
	if errors.As(err, &ee) {
		if ee.msg != "" {
			fmt.Fprintf(e.stderr, "error: %s\n", ee.msg)
		}
		return ee.code
	}
	fmt.Fprintf(e.stderr, "error: %s\n", err)
	var h hinted
	if errors.As(err, &h) {
		fmt.Fprintf(e.stderr, "hint: %s\n", h.hint)
	}
	var ue usageError
	if errors.As(err, &ue) {
		return exitUsage
	}
	if code, ok := checkfu.CodeOf(err); ok {
		fmt.Fprintf(e.stderr, "code: %s\n", code)
	}
	return exitFailed
}

func main() {
	// A jail's init stage is this binary re-executed (the matrix's jail
	// variant runs the jail provider in this process): it never returns.
	jail.InitMain()
	e := &env{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv}
	os.Exit(run(e, os.Args[1:]))
}
