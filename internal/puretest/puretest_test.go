package puretest

import "testing"

// TestImpureFindsPlanted proves the check can fail: a planted import of
// "os" is reported unless its file is excepted, and a directory with no
// files reads none.
func TestImpureFindsPlanted(t *testing.T) {
	found, read, err := Impure([]string{"testdata/impure"})
	if err != nil || len(found) != 2 || read != 3 {
		t.Errorf("Impure(testdata/impure) = %v, %d, %v; want both os imports of 3 files", found, read, err)
	}
	found, read, err = Impure([]string{"testdata/impure"}, "load.go", "read.go")
	if err != nil || len(found) != 0 || read != 1 {
		t.Errorf("Impure with both excepted = %v, %d, %v; want none of 1 file", found, read, err)
	}
	if _, read, err := Impure([]string{"testdata/none"}); err != nil || read != 0 {
		t.Errorf("Impure(testdata/none) read %d files, err %v; want 0, nil", read, err)
	}
}
