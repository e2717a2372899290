// Package mint plants exported functions and methods that hand out an
// authorized value, directly and inside a struct.
package mint

import "leaky/custody/edge"

// Mint is planted: it returns the value itself.
func Mint() edge.Authorized { return edge.Authorized{} }

// A Box holds one.
type Box struct{ A edge.Authorized }

// Open is planted: a method whose result holds the value in a field.
func (Box) Open() []*Box { return nil }
