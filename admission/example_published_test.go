package admission_test

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/admission"
)

// A stored version reads back only as Publish would make it: its digests
// are no signature, so ParsePublished derives the version again and
// refuses a host added to the stored document.
func ExampleParsePublished() {
	v := exampleVersion(`{"type": "allowlist", "allowed_hosts": ["api.example.com"]}`)
	doc, _ := json.Marshal(v)

	back, err := admission.ParsePublished(doc)
	fmt.Println(back.Version(), back.Hosts(), err)

	edited := strings.Replace(string(doc), `"granted_by":["allowed_hosts"]}]`,
		`"granted_by":["allowed_hosts"]},{"host":"evil.example.com","port":443,"granted_by":["allowed_hosts"]}]`, 1)
	_, err = admission.ParsePublished([]byte(edited))
	code, _ := checkfu.CodeOf(err)
	fmt.Println(code)
	// Output:
	// 1 [api.example.com:443] <nil>
	// published_invalid
}

// The packaged harness catalog: the ACP harness runs agents, the
// one-shot harness is listed but blocked, and any other name is unknown.
func ExampleDefaultHarnessCatalog() {
	c := admission.DefaultHarnessCatalog()
	for _, name := range []string{"acp", "oneshot", "shell"} {
		_, err := c.Launch(name)
		code, _ := checkfu.CodeOf(err)
		fmt.Printf("%s %q\n", name, code)
	}
	// Output:
	// acp ""
	// oneshot "harness_blocked"
	// shell "harness_unknown"
}
