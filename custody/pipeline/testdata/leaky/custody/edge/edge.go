// Package edge plants an edge with a method that takes no authorized value.
package edge

import (
	"context"

	"leaky/custody/outbound"
)

// Authorized is the value the edge takes.
type Authorized = outbound.Authorized

// Edge sends calls.
type Edge struct{}

// Send sends an authorized call.
func (e *Edge) Send(ctx context.Context, a Authorized) error { return nil }

// Remote sends an authorized remote call.
func (e *Edge) Remote(ctx context.Context, a Authorized) error { return nil }

// CloseIdleConnections closes nothing.
func (e *Edge) CloseIdleConnections() {}

// Call is planted: a path to the credential that takes a plain URL.
func (e *Edge) Call(ctx context.Context, url string) error { return nil }
