package door_test

import (
	"fmt"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/gateway/door"
)

// The model relay listens on loopback only: it serves the sandbox's own
// processes, so any other address is refused before a socket exists.
func ExampleListenModel() {
	ln, err := door.ListenModel("127.0.0.1:0")
	if err != nil {
		fmt.Println(err)
		return
	}
	ln.Close()
	fmt.Println(ln.Addr().Network())

	_, err = door.ListenModel("0.0.0.0:8080")
	code, _ := checkfu.CodeOf(err)
	fmt.Println(code)
	// Output:
	// tcp
	// relay_arguments_invalid
}
