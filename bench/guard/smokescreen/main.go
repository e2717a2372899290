//go:build ignore

// This file is built by bench/guard/run.sh in a temporary module, against a
// pinned stripe/smokescreen, to run smokescreen exactly as its own main
// does but with its logger discarded: the benchmark compares proxies, not
// JSON log formatting. It is not part of the checkfu module's build.
package main

import (
	"io"
	"log"

	"github.com/sirupsen/logrus"
	"github.com/stripe/smokescreen/cmd"
	"github.com/stripe/smokescreen/pkg/smokescreen"
)

func main() {
	quiet := logrus.New()
	quiet.Out = io.Discard
	quiet.SetLevel(logrus.PanicLevel)
	conf, err := cmd.NewConfiguration(nil, quiet)
	if err != nil {
		log.Fatalf("smokescreen configuration: %v", err)
	}
	if conf == nil {
		return // --help or --version
	}
	log.SetOutput(io.Discard)
	smokescreen.StartWithConfig(conf, nil)
}
