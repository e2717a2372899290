package custody

import "github.com/checkfu/checkfu/custody/address"

// A Binding is the custody address of a credential: the namespace that
// owns it, the integration it authenticates to and its handle. It is
// [address.Binding]; it lives in custody/address so that the authorization
// plane (custody/authz) can name a credential without importing the
// package that holds credential bytes.
type Binding = address.Binding

// A Handle is the opaque, printable name of one credential in custody. It
// is [address.Handle].
type Handle = address.Handle
