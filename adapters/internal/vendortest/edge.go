package vendortest

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"
)

// Edge is what a Runner's custody-backed edge does, for tests: it
// resolves a handle to a key only at send time, attaches it to a copy of
// the request, and hands back the response pointing at the original.
type Edge struct {
	// Keys maps a credential handle to its key.
	Keys map[string]string
	mu   sync.Mutex
	sent int
}

// Send sends a copy of req with header set to prefix and the key of
// handle; an unknown handle is io.ErrUnexpectedEOF.
func (e *Edge) Send(req *http.Request, handle, header, prefix string) (*http.Response, error) {
	key, ok := e.Keys[handle]
	if !ok {
		return nil, io.ErrUnexpectedEOF
	}
	out := req.Clone(req.Context())
	out.Header.Set(header, prefix+key)
	resp, err := http.DefaultTransport.RoundTrip(out)
	if resp != nil {
		resp.Request = req
	}
	e.mu.Lock()
	e.sent++
	e.mu.Unlock()
	return resp, err
}

// Sent is how many requests the edge has sent.
func (e *Edge) Sent() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.sent
}

// skip are the types Holds does not walk: the Runner's edge (which may
// hold the key) and the standard library's HTTP machinery (whose state
// other goroutines change, and which never sees the key: only the
// edge's copy of a request does).
var skip = map[reflect.Type]bool{
	reflect.TypeFor[*Edge]():           true,
	reflect.TypeFor[*http.Client]():    true,
	reflect.TypeFor[*http.Transport](): true,
}

// Holds reports whether the canary appears anywhere reflect can reach
// from v: strings, byte slices, maps, slices, pointers and struct fields,
// exported or not.
// The Runner's edge itself (which may hold the key) is not walked.
func Holds(v any, canary string) bool {
	seen := map[uintptr]bool{}
	var walk func(reflect.Value, int) bool
	walk = func(x reflect.Value, depth int) bool {
		if depth > 40 || !x.IsValid() {
			return false
		}
		switch x.Kind() {
		case reflect.String:
			return strings.Contains(x.String(), canary)
		case reflect.Pointer, reflect.Interface:
			if x.IsNil() || skip[x.Type()] {
				return false
			}
			if x.Kind() == reflect.Pointer {
				if seen[x.Pointer()] {
					return false
				}
				seen[x.Pointer()] = true
			}
			return walk(x.Elem(), depth+1)
		case reflect.Struct:
			for i := range x.NumField() {
				if walk(x.Field(i), depth+1) {
					return true
				}
			}
		case reflect.Slice, reflect.Array:
			if x.Kind() == reflect.Slice && x.Type().Elem().Kind() == reflect.Uint8 {
				return bytes.Contains(x.Bytes(), []byte(canary))
			}
			for i := range x.Len() {
				if walk(x.Index(i), depth+1) {
					return true
				}
			}
		case reflect.Map:
			it := x.MapRange()
			for it.Next() {
				if walk(it.Key(), depth+1) || walk(it.Value(), depth+1) {
					return true
				}
			}
		}
		return false
	}
	return walk(reflect.ValueOf(v), 0)
}

// FailOnce is an edge that fails the first request Match reports true
// for, as a vendor that cannot be reached fails it, without sending it;
// every other request goes to Next.
type FailOnce struct {
	Next  *Edge
	Match func(*http.Request) bool
	mu    sync.Mutex
	spent bool
}

// ErrUnreachable is the error FailOnce's failed request returns.
var ErrUnreachable = errors.New("vendortest: the vendor could not be reached")

// Send fails the first matching request with ErrUnreachable and sends
// every other one through Next.
func (f *FailOnce) Send(req *http.Request, handle, header, prefix string) (*http.Response, error) {
	f.mu.Lock()
	fail := !f.spent && f.Match(req)
	if fail {
		f.spent = true
	}
	f.mu.Unlock()
	if fail {
		return nil, ErrUnreachable
	}
	return f.Next.Send(req, handle, header, prefix)
}

// CheckDestroyRetried destroys s three times over an edge that failed
// the first removal (FailOnce): the first Destroy must return the
// failure and leave the sandbox to the vendor (held reports it still
// there), the second must remove it, and the third must send nothing.
// edge is FailOnce's Next.
func CheckDestroyRetried(t testing.TB, destroy func(context.Context) error, edge *Edge, held func() bool) {
	t.Helper()
	ctx := context.Background()
	if err := destroy(ctx); err == nil || !held() {
		t.Fatalf("a Destroy whose removal failed = %v, sandbox held %v; want the failure, and the sandbox still there", err, held())
	}
	if err := destroy(ctx); err != nil || held() {
		t.Fatalf("a second Destroy = %v, sandbox held %v; want nil, and the sandbox removed", err, held())
	}
	sent := edge.Sent()
	if err := destroy(ctx); err != nil || edge.Sent() != sent {
		t.Fatalf("a Destroy after a removal = %v and sent %d requests; want nil and none", err, edge.Sent()-sent)
	}
}
