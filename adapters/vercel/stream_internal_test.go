package vercel

import (
	"bufio"
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestNextLineRefusals(t *testing.T) {
	for name, in := range map[string]string{
		"not JSON":  "nope\n",
		"an array":  "[1]\n",
		"duplicate": `{"stream":"stdout","stream":"stderr","data":"x"}` + "\n",
		"too long":  `{"data":"` + strings.Repeat("a", maxLine) + `"}` + "\n",
		"ended":     "",
	} {
		if _, err := nextLine(bufio.NewReader(strings.NewReader(in))); !errors.Is(err, CodeCommandStreamInvalid) {
			t.Errorf("%s: nextLine = %v, want command_stream_invalid", name, err)
		}
	}
	if _, err := commandID(map[string]any{"command": map[string]any{"id": "a/b"}}); !errors.Is(err, CodeCommandStreamInvalid) {
		t.Errorf("a command id with a slash = %v", err)
	}
}

// FuzzNextLine: any stream yields objects or a typed refusal.
func FuzzNextLine(f *testing.F) {
	f.Add([]byte(`{"command":{"id":"c"}}` + "\n" + `{"stream":"stdout","data":"x"}` + "\n"))
	f.Add([]byte(`{"stream":"error","data":{"code":"a","message":"b"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		br := bufio.NewReader(bytes.NewReader(data))
		for range 100 {
			if _, err := nextLine(br); err != nil {
				if !errors.Is(err, CodeCommandStreamInvalid) {
					t.Fatalf("untyped error %v", err)
				}
				return
			}
		}
	})
}
