package eventlog

import (
	"reflect"
	"testing"
)

// TestEntryViewHasEveryField: Entry.Format and Entry.GobEncode go
// through entryView, so a field added to Entry but not to entryView would
// vanish from fmt and gob output.
func TestEntryViewHasEveryField(t *testing.T) {
	entry, view := reflect.TypeFor[Entry](), reflect.TypeFor[entryView]()
	if entry.NumField() != view.NumField() {
		t.Fatalf("Entry has %d fields, entryView %d", entry.NumField(), view.NumField())
	}
	for i := range entry.NumField() {
		a, b := entry.Field(i), view.Field(i)
		if a.Name != b.Name || a.Type != b.Type {
			t.Errorf("field %d: Entry has %s %v, entryView %s %v", i, a.Name, a.Type, b.Name, b.Type)
		}
	}
}
