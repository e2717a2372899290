package main

import (
	"fmt"
	"runtime/debug"
)

func init() {
	register(&command{
		name:    "version",
		summary: "print the module version and Go version",
		run: func(e *env, args []string) error {
			fs := newFlagSet(e, "version", "")
			if err := parseFlags(fs, args); err != nil {
				return err
			}
			if fs.NArg() != 0 {
				return usagef("checkfu version takes no arguments")
			}
			v, goVersion := "(devel)", "unknown"
			if bi, ok := debug.ReadBuildInfo(); ok {
				goVersion = bi.GoVersion
				if bi.Main.Version != "" {
					v = bi.Main.Version
				}
			}
			fmt.Fprintf(e.stdout, "checkfu %s %s\n", v, goVersion)
			return nil
		},
	})
}
