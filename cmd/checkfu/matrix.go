package main

import (
	"context"
	"debug/elf"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/adapters/docker"
	"github.com/checkfu/checkfu/conformance/matrix"
)

func init() {
	register(&command{
		name:    "matrix",
		summary: "run the five-fact conformance matrix on an owned Docker or network-namespace topology",
		run:     runMatrix,
	})
}

// runMatrix runs the matrix against one provider and writes the
// statement that "checkfu receipt sign" signs. It exits 0 only when all
// five facts hold.
func runMatrix(e *env, args []string) error {
	if len(args) > 0 && args[0] == "tool" {
		// The in-container helpers: the image's checkfu binary is the
		// owned DNS, the listeners and the probe.
		if code := matrix.RunTool(args[1:], e.stdin, e.stdout, e.stderr); code != 0 {
			return exitError{code: code}
		}
		return nil
	}
	fs := newFlagSet(e, "matrix", "-provider NAME [-revision R] -out STATEMENT.json [-evidence FILE] | -mutants -src DIR")
	provider := fs.String("provider", matrix.DockerProvider, "exact provider `name` the statement is about")
	revision := fs.String("revision", "", "exact provider `revision` (default: the table's)")
	out := fs.String("out", "", "`path` of the statement to write (must not exist)")
	evidence := fs.String("evidence", "", "`path` of the evidence file to write (default: the statement's path + .evidence.json)")
	binary := fs.String("binary", "", "`path` of a static linux checkfu binary for the guard and the helpers (default: this one)")
	slot := fs.Int("slot", 0, "topology `slot` (default: a free one)")
	label := fs.String("label", docker.DefaultLabel, "`KEY=VALUE` label on every container, network and image the run creates")
	mutants := fs.Bool("mutants", false, "build each broken guard and provider and show the matrix goes red for each")
	src := fs.String("src", ".", "checkfu module `directory`, for -mutants")
	asJSON := fs.Bool("json", false, "print the summary as one JSON object on stdout (progress goes to stderr)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return usagef("checkfu matrix takes no arguments (got %q)", fs.Args())
	}
	if !*mutants && *out == "" {
		return usagef("checkfu matrix needs -out (or -mutants)")
	}
	p, err := matrix.LookupProvider(*provider)
	if err != nil {
		return withHint(err, "name one of "+strings.Join(matrix.ProviderNames(), ", "))
	}
	if *revision == "" {
		*revision = p.Revision
	}
	target := checkfu.ProviderRevision{Provider: p.Name, Revision: *revision}
	if !p.Runnable {
		if *asJSON {
			sum := matrixSummary{Provider: target.Provider, Revision: target.Revision, Ceiling: p.Ceiling().String(), Cannot: map[string]string{}}
			for f, why := range p.Cannot {
				sum.Cannot[string(f)] = why
			}
			if err := writeJSONLine(e.stdout, sum); err != nil {
				return err
			}
		} else {
			for f, why := range p.Cannot {
				fmt.Fprintf(e.stdout, "%-28s cannot hold: %s\n", f, why)
			}
			fmt.Fprintf(e.stdout, "grade: %s (ceiling)\n", p.Ceiling())
		}
		return checkfu.Refuse(matrix.CodeProviderIncapable, "matrix: %s cannot hold every fact by construction; it stays at %s", target, p.Ceiling())
	}
	if *binary == "" {
		if *binary, err = os.Executable(); err != nil {
			return err
		}
	}
	if err := staticBinary(*binary); err != nil {
		return withHint(err, "build one with CGO_ENABLED=0 go build -trimpath ./cmd/checkfu and pass it with -binary")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var eng *docker.Engine
	engine := "the network-namespace topology"
	if target.Provider != matrix.JailProvider {
		if eng, err = docker.Connect(ctx, docker.Options{Label: *label}); err != nil {
			return withHint(err, "start a Docker engine (.ci/setup.d/20-docker.sh) or set DOCKER_HOST")
		}
		defer eng.Close()
		engine = "Docker " + eng.EngineVersion()
	}
	// The canary plane credential, held where a Runner holds plane
	// credentials: this process's environment.
	canary := matrix.NewCanary()
	os.Setenv(matrix.PlaneCredentialEnv, canary)
	defer os.Unsetenv(matrix.PlaneCredentialEnv)

	text := e.stdout // the human-readable lines: stderr when stdout is JSON
	if *asJSON {
		text = e.stderr
	}
	tty := isTerminal(text)
	progress := func(c matrix.Case) {
		line := progressLine(c)
		if tty && c.Verdict == matrix.Pass {
			fmt.Fprintf(text, "\r\033[K%s", clipLine(line, 120))
			return
		}
		if tty {
			fmt.Fprint(text, "\r\033[K")
		}
		fmt.Fprintln(text, line)
	}
	fmt.Fprintf(text, "matrix: %s on %s, label isolated\n", target, engine)
	rep, err := matrix.Run(ctx, matrix.Config{Engine: eng, Binary: *binary, Target: target, PlaneCredential: canary, Slot: *slot, Label: *label, Progress: progress})
	if err != nil {
		return err
	}
	if tty {
		fmt.Fprint(text, "\r\033[K")
	}
	held := rep.Held()
	if *out != "" {
		if err := writeStatement(rep, *out, *evidence); err != nil {
			return err
		}
	}
	if *asJSON {
		sum := summarize(rep, rep.Engine, *out)
		if err := writeJSONLine(e.stdout, sum); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(e.stdout, "\n%-28s %s\n", "FACT", "HELD")
		for _, f := range heldTable(rep) {
			fmt.Fprintln(e.stdout, f)
		}
		fmt.Fprintf(e.stdout, "wall time: %s (%d cases)\n", rep.WallTime, len(rep.Cases))
		if *out != "" {
			fmt.Fprintf(e.stdout, "statement: %s\n", *out)
		}
	}
	if *mutants {
		if err := runMutants(ctx, &env{stdin: e.stdin, stdout: text, stderr: e.stderr, getenv: e.getenv}, *src, *label, target, rep); err != nil {
			return err
		}
	}
	if !held.Complete() {
		return exitError{code: exitFailed, msg: fmt.Sprintf("the matrix holds %s; it lacks %v", held, held.Missing())}
	}
	return nil
}

// A matrixSummary is what "checkfu matrix -json" prints: the target, and
// per fact whether it held and, when not, the first case that kept it
// from holding. A provider that cannot hold every fact by construction
// carries its ceiling and the facts it cannot hold instead of a run.
type matrixSummary struct {
	Provider  string            `json:"provider"`
	Revision  string            `json:"revision"`
	Ceiling   string            `json:"ceiling,omitempty"`
	Cannot    map[string]string `json:"cannot,omitempty"`
	Engine    string            `json:"engine,omitempty"`
	Facts     []factSummary     `json:"facts,omitempty"`
	Complete  bool              `json:"complete"`
	Cases     int               `json:"cases"`
	WallTime  string            `json:"wall_time"`
	Statement string            `json:"statement,omitempty"`
}

type factSummary struct {
	Fact    string `json:"fact"`
	Held    bool   `json:"held"`
	Case    string `json:"case,omitempty"`
	Verdict string `json:"verdict,omitempty"`
	Why     string `json:"why,omitempty"`
}

// summarize returns the JSON summary of rep, facts in the order of their
// first case.
func summarize(rep *matrix.Report, engine, statement string) matrixSummary {
	held := rep.Held()
	sum := matrixSummary{Provider: rep.Target.Provider, Revision: rep.Target.Revision, Engine: engine,
		Complete: held.Complete(), Cases: len(rep.Cases), WallTime: rep.WallTime, Statement: statement}
	seen := map[string]bool{}
	for _, c := range rep.Cases {
		if seen[string(c.Fact)] {
			continue
		}
		seen[string(c.Fact)] = true
		f := factSummary{Fact: string(c.Fact), Held: held.Has(c.Fact)}
		if !f.Held {
			for _, d := range rep.Cases {
				if d.Fact == c.Fact && d.Verdict != matrix.Pass {
					f.Case, f.Verdict, f.Why = d.Name, string(d.Verdict), d.Why
					break
				}
			}
		}
		sum.Facts = append(sum.Facts, f)
	}
	return sum
}

// progressLine is the line "checkfu matrix" prints for a judged case. Its
// why quotes what the provider under test answered, so it is printed
// with textLine.
func progressLine(c matrix.Case) string {
	return fmt.Sprintf("%-28s %-44s %-13s %s", c.Fact, c.Name, c.Verdict, textLine(c.Why))
}

// heldTable returns one line per fact: held or not, with the first case
// that kept it from holding (its why printed with textLine).
func heldTable(rep *matrix.Report) []string {
	held := rep.Held()
	var out []string
	seen := map[string]bool{}
	for _, c := range rep.Cases {
		if seen[string(c.Fact)] {
			continue
		}
		seen[string(c.Fact)] = true
		if held.Has(c.Fact) {
			out = append(out, fmt.Sprintf("%-28s yes", c.Fact))
			continue
		}
		for _, d := range rep.Cases {
			if d.Fact == c.Fact && d.Verdict != matrix.Pass {
				out = append(out, fmt.Sprintf("%-28s no: %s %s: %s", c.Fact, d.Name, d.Verdict, textLine(d.Why)))
				break
			}
		}
	}
	return out
}

// writeStatement writes the statement and, beside it, the evidence whose
// digests it carries.
func writeStatement(rep *matrix.Report, out, evidence string) error {
	rec, err := rep.Record(time.Now())
	if err != nil {
		return err
	}
	stmt, err := rec.Statement()
	if err != nil {
		return err
	}
	if evidence == "" {
		evidence = out + ".evidence.json"
	}
	ev, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	if err := attesterWriteNew(evidence, append(ev, '\n'), 0o644); err != nil {
		return err
	}
	return attesterWriteNew(out, stmt, 0o644)
}

// runMutants runs every mutant, two at a time, and fails naming each
// survivor.
func runMutants(ctx context.Context, e *env, src, label string, target checkfu.ProviderRevision, ref *matrix.Report) error {
	fmt.Fprintf(e.stdout, "\nmutants (each builds a broken checkfu from %s with go build -overlay):\n", src)
	ms := matrix.MutantsFor(target.Provider)
	results := make([]matrix.MutantResult, len(ms))
	errs := make([]error, len(ms))
	sem := make(chan struct{}, 2)
	var wg sync.WaitGroup
	var mu sync.Mutex
	for i, m := range ms {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			results[i], errs[i] = matrix.RunMutant(ctx, matrix.MutantConfig{ModuleDir: src, Target: target, Reference: ref, Label: label}, m)
			mu.Lock()
			if errs[i] != nil {
				fmt.Fprintf(e.stdout, "ERROR    %-45s %v\n", m.Name, errs[i])
			} else {
				fmt.Fprintln(e.stdout, results[i])
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	var bad []string
	for i, m := range ms {
		if errs[i] != nil || !results[i].Killed {
			bad = append(bad, m.Name)
		}
	}
	if len(bad) > 0 {
		return checkfu.Refuse(matrix.CodeMutantSurvived, "matrix: %d mutant(s) not killed: %s", len(bad), strings.Join(bad, "; "))
	}
	fmt.Fprintf(e.stdout, "all %d mutants killed, each by the fact that targets it\n", len(ms))
	return nil
}

// staticBinary refuses a binary that needs a dynamic loader: the images
// hold nothing but busybox and the binary.
func staticBinary(path string) error {
	f, err := elf.Open(path)
	if err != nil {
		return checkfu.Refuse(checkfu.CodeConfigInvalid, "matrix: %s is not a linux executable: %v", checkfu.Quote(path), err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return checkfu.Refuse(checkfu.CodeConfigInvalid, "matrix: %s is dynamically linked; the guard image needs a static binary", checkfu.Quote(path))
		}
	}
	return nil
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func clipLine(s string, n int) string {
	if len(s) <= n {
		return s
	}
	r := []rune(s)
	if len(r) > n {
		r = r[:n]
	}
	return string(r)
}
