package custody_test

import (
	"fmt"
	"log/slog"
	"os"

	"github.com/checkfu/checkfu/custody"
)

// Every text form of a Secret is "[redacted]", also in structured logs.
func ExampleSecret_LogValue() {
	s := custody.NewSecret([]byte("ghp_example-token"))
	defer s.Destroy()
	log := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{} // keep the output deterministic
			}
			return a
		},
	}))
	log.Info("attaching", "credential", s, "binding", exampleCred)
	fmt.Printf("%v %+v %#v %s %q %x\n", s, s, s, s, s, s)
	// Output:
	// level=INFO msg=attaching credential=[redacted] binding=acme/github/ch_aaaaaaaaaaaaaaaaaaaaaaaaaa
	// [redacted] [redacted] custody.Secret([redacted]) [redacted] [redacted] [redacted]
}
