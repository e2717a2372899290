package edge

import (
	"github.com/checkfu/checkfu/custody"
	"github.com/checkfu/checkfu/custody/address"
)

var testHandle = address.MustParseHandle("ch_aaaaaaaaaaaaaaaaaaaaaaaaaa")

func testBinding() custody.Binding {
	return custody.Binding{Namespace: "github", Integration: "deploy-token", Handle: testHandle}
}
