package wire

// A window is the stdin credit as an ABSOLUTE offset limit: the sender
// may have bytes below limit outstanding, never at or above it. Because
// the limit is absolute, a lost, duplicated or reordered grant can
// neither leak nor double credit: grant only ever raises it.
//
// The zero window grants nothing (fails closed).
type window struct {
	limit uint64
}

// grant raises the limit to l; it reports whether the limit moved. A
// grant below the current limit (stale or reordered) is ignored.
func (w *window) grant(l uint64) bool {
	if l <= w.limit {
		return false
	}
	w.limit = l
	return true
}

// room returns how many bytes may be sent starting at offset off.
func (w *window) room(off uint64) uint64 {
	if off >= w.limit {
		return 0
	}
	return w.limit - off
}

// allows reports whether bytes [off, end) fit entirely below the limit:
// the overrun check. A frame that does not fit is refused whole.
func (w *window) allows(off, end uint64) bool { return end >= off && end <= w.limit }
