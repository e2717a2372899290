// Command mutationdoc writes docs/mutation.md: for each security check in
// the module, the mutant that deletes it and the test that kills it. It
// reads the mutant tables of every package (the []mutation.Mutant
// literals of the _test.go files, egress's own positional tables, and the
// conformance matrix's guard mutants) with go/ast, so the document is
// generated, never edited.
//
//	go run ./internal/mutationdoc -w     # rewrite docs/mutation.md
//	go run ./internal/mutationdoc        # print it
//
// TestDocIsCurrent fails when docs/mutation.md differs from what this
// command writes. The harness step of .ci/run
// (CHECKFU_MUTANTS=1 go test -run '^Test(Net)?Mutants$' ./...) applies
// every listed mutant to a scratch copy and requires its test to go red,
// so the list cannot rot.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
)

func main() {
	write := flag.Bool("w", false, "write docs/mutation.md instead of printing it")
	root := flag.String("root", ".", "module root `directory`")
	flag.Parse()
	doc, err := Generate(*root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "mutationdoc:", err)
		os.Exit(1)
	}
	if !*write {
		os.Stdout.Write(doc)
		return
	}
	if err := os.WriteFile(filepath.Join(*root, "docs", "mutation.md"), doc, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "mutationdoc:", err)
		os.Exit(1)
	}
}
