package reveal

import (
	"errors"
	"testing"
)

// The test binary does not link package custody, so the hook starts empty.
func TestHook(t *testing.T) {
	if err := With("x", func([]byte) error { return nil }); err == nil {
		t.Fatal("With without a registered hook succeeded")
	}
	sentinel := errors.New("used")
	Register(func(secret any, use func([]byte) error) error { return use([]byte(secret.(string))) })
	err := With("abc", func(b []byte) error {
		if string(b) != "abc" {
			t.Errorf("got %q", b)
		}
		return sentinel
	})
	if err != sentinel {
		t.Fatalf("With = %v, want the callback's error", err)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("a second Register did not panic")
		}
	}()
	Register(func(any, func([]byte) error) error { return nil })
}
