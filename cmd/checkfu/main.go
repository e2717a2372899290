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
	"sort"
	"strings"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/adapters/jail"
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

// usagef returns a usageError with a formatted message.
func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

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
// to e.stderr and returns errors instead of exiting.
func newFlagSet(e *env, name, usage string) *flag.FlagSet {
	fs := flag.NewFlagSet("checkfu "+name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	fs.Usage = func() {
		fmt.Fprintf(e.stderr, "usage: checkfu %s %s\n", name, usage)
		if hasFlags(fs) {
			fmt.Fprintln(e.stderr, "\nflags:")
			fs.PrintDefaults()
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
// usage text) and any other flag error to a usageError.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return errHelp
		}
		return usageError{err.Error()}
	}
	return nil
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
		return usagef("checkfu %s: unknown subcommand %q (want one of %s)", name, args[0], strings.Join(names, ", "))
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
		fmt.Fprintf(e.stderr, "error: unknown command %q\n", args[0])
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
