// Package outbound plants the faults TestEdgePathsFindsPlantedLeaks
// requires the checker to report: the authorized value lives outside any
// internal package and has an exported field.
package outbound

// Call is what an Authorized carries.
type Call struct{ URL string }

// Authorized is the value the edge takes.
type Authorized struct {
	C *Call // planted: an exported field
}
