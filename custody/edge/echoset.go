package edge

import (
	"bytes"
	"encoding/binary"
	"slices"
	"sync"
)

// An echoSet is the forms echoIn looks for. It searches a text for all
// of its forms in one pass (formSampler, built on the first search); a
// set made for a stream searches a long text through a gramFilter,
// whose set-up is paid once for the stream. It is not safe for
// concurrent use, and it holds fragments of the credential: the caller
// clears it (clear) with the forms' buffer.
type echoSet struct {
	forms    [][]byte
	short    int         // the length of the shortest form
	filtered bool        // search long texts through filter, built on first use
	stream   bool        // made for a stream: keeps its view buffers (views)
	filter   *gramFilter // nil until built, or when the forms are too short for it
	sampled  bool        // sampler is built, on the first text searched
	// plainBelow: until the sampler is built, a text shorter than this
	// is searched form by form (containsEach), which is cheaper than
	// building the sampler for it (0: never).
	plainBelow int
	sampler    formSampler // for the texts the filter does not search
	// views are a stream set's buffers for the JSON and line-break views
	// of a text, kept from one batch to the next (see maxKeptView); each
	// is cleared after every use. A set made for one answer keeps none.
	views [numViews][]byte
	// pooled are a set made for one answer's view buffers, from the
	// zeroed pools (getZeroed), given back by clear.
	pooled [numViews]*[]byte
}

// The views a stream set keeps a buffer for.
const (
	viewJSON = iota
	viewJoined
	numViews
)

// maxKeptView is the largest view buffer a stream set keeps for its next
// batch, 256 KiB (four of the model route's 64 KiB batches): a longer
// text's views are allocated for it and dropped after, so a provider's
// one long event does not hold memory for the rest of its stream.
const maxKeptView = 256 << 10

// newEchoSet returns the set of forms (non-empty); filtered asks for the
// one-pass search of long texts, worth its set-up for a stream, and
// keeps the buffers of its views from one text to the next.
func newEchoSet(forms [][]byte, filtered bool) *echoSet {
	return &echoSet{forms: forms, short: shortest(forms), filtered: filtered, stream: filtered}
}

// clear zeroes what the set derived from the forms, and the view
// buffers it kept.
func (e *echoSet) clear() {
	if e.sampled {
		e.sampler.clear()
	}
	if e.filter != nil {
		clear(e.filter.grams)
		clear(e.filter.bits[:])
	}
	for i := range e.views {
		clear(e.views[i][:cap(e.views[i])])
		e.views[i] = nil
	}
	for i, p := range e.pooled {
		if p != nil {
			putZeroed(p)
			e.pooled[i] = nil
		}
	}
}

// view returns an empty buffer with room for n bytes for view i of a
// text. A stream set (filtered) keeps it for the next text when n is at
// most maxKeptView; the caller clears what it wrote after every use, so
// a kept buffer holds nothing between uses.
func (e *echoSet) view(i, n int) []byte {
	if !e.stream && n <= maxPooledBuf {
		// One answer's views: a pooled buffer, for this set's life.
		// Its capacity is capped at n, so what is written stays
		// in it, and clear zeroes all of it.
		if p := e.pooled[i]; p == nil || cap(*p) < n {
			if p != nil {
				putZeroed(p)
			}
			e.pooled[i] = getZeroed(n)
		}
		return (*e.pooled[i])[:0:n]
	}
	if !e.stream || n > maxKeptView {
		return make([]byte, 0, n)
	}
	if cap(e.views[i]) < n {
		// The old buffer was cleared after its last use.
		e.views[i] = make([]byte, 0, max(n, filterMinText))
	}
	return e.views[i][:0]
}

// The zeroed pools keep the buffers of one answer's check (its forms,
// its views) from one answer to the next, as allocating them for every
// answer costs more than the search. Pool k holds buffers of
// minPooledBuf<<k bytes. Every byte of a pooled buffer is zero: putZeroed
// clears the whole buffer before it goes back, so nothing of a
// credential or of an answer waits in a pool. A buffer of more than
// maxPooledBuf bytes is not pooled.
var zeroPools [poolClasses]sync.Pool

const (
	minPooledBuf = 1 << 10                           // the smallest pooled buffer, 1 KiB
	maxPooledBuf = minPooledBuf << (poolClasses - 1) // the largest, 64 KiB
	poolClasses  = 7
)

// poolClass returns the pool of the smallest class holding n bytes, or
// -1 when n is more than maxPooledBuf.
func poolClass(n int) int {
	for k := range poolClasses {
		if n <= minPooledBuf<<k {
			return k
		}
	}
	return -1
}

// getZeroed returns a buffer of at least n bytes (its length), every
// one zero: a pooled one, or a new one of its class's size.
func getZeroed(n int) *[]byte {
	k := poolClass(n)
	if k < 0 {
		b := make([]byte, n)
		return &b
	}
	if p, ok := zeroPools[k].Get().(*[]byte); ok {
		return p
	}
	b := make([]byte, minPooledBuf<<k)
	return &b
}

// putZeroed zeroes the whole of *p and, when its size is a class's, puts
// it back in that class's pool.
func putZeroed(p *[]byte) {
	b := (*p)[:cap(*p)]
	clear(b)
	*p = b
	if k := poolClass(len(b)); k >= 0 && len(b) == minPooledBuf<<k {
		zeroPools[k].Put(p)
	}
}

// plainSearchMax is the plainBelow of the sets refuseEcho makes: a
// text (a header value, a short body) of fewer than 256 bytes is
// searched form by form until a longer one has built the sampler. For a
// 33-byte token's fourteen forms, one pass a form over 256 bytes of JSON
// takes about a quarter of the sampler's set-up; over 1 KiB, twice it.
const plainSearchMax = 256

// filterMinText is the shortest text a filtered set searches through its
// gramFilter: below it, the formSampler is as quick.
const filterMinText = 4 << 10

// containsAny reports whether any form of e occurs in s, in one pass
// over s.
func containsAny(s []byte, e *echoSet) bool {
	if len(s) < e.short {
		return false
	}
	if e.short == 0 {
		return true // an empty form occurs in every text (bytes.Contains)
	}
	if e.filtered && len(s) >= filterMinText {
		if e.filter == nil {
			e.filter = newGramFilter(e.forms)
			e.filtered = e.filter != nil
		}
		if e.filter != nil {
			return e.filter.containsAny(s, e.forms)
		}
	}
	if !e.sampled && len(s) < e.plainBelow {
		return containsEach(s, e.forms)
	}
	if !e.sampled {
		e.sampler.init(e.forms, e.short)
		e.sampled = true
	}
	return e.sampler.containsAny(s, e.forms)
}

// A formSampler finds any of a set of forms (of any lengths, at least
// one byte) in a text in one pass that reads only every stride-th gram
// of it, at a set-up cost of stride grams per form, small enough to pay
// for every answer. With short the length of the shortest form, a gram
// is q = min(gramLen, short) bytes and stride = short - q + 1. An
// occurrence of a form at p covers p..p+short-1 at least; the first
// multiple j of stride at or after p is p+r with r < stride, and its gram
// ends by p+r+q <= p+short: it is the form's gram at offset r. So every
// form's grams at offsets 0..stride-1 are put in a one-hash Bloom
// filter (bits: no false negative), the gram at every multiple of
// stride is looked up, and on a hit every start from j-stride+1 to j is
// checked against every form whose first byte it holds (starts) with
// bytes.HasPrefix. A miss everywhere proves that no form occurs. It holds
// fragments of the credential: its owner clears it with the forms.
type formSampler struct {
	q, stride int
	starts    [256]bool // the forms' first bytes
	bits      [samplerBits / 64]uint64
}

// samplerBits is the size in bits of a formSampler's Bloom filter,
// 2^15 (4 KiB). A 40-byte token's fourteen forms put about 450 grams in
// it: a gram of text that no form holds passes it about once in seventy
// lookups, and costs a check of stride starts then.
const samplerBits = 1 << 15

// init makes the zero f the sampler of forms, short the length of the
// shortest (at least 1).
func (f *formSampler) init(forms [][]byte, short int) {
	q := min(gramLen, short)
	f.q, f.stride = q, short-q+1
	bits := &f.bits
	for _, form := range forms {
		f.starts[form[0]] = true
		for r := 0; r < f.stride; r++ {
			h := samplerHash(loadGram(form[r:], q))
			bits[h/64] |= 1 << (h % 64)
		}
	}
}

// clear zeroes what f derived from the forms.
func (f *formSampler) clear() {
	clear(f.bits[:])
	clear(f.starts[:])
}

// loadGram returns the first q (1 to gramLen) bytes of b, which holds at
// least q, as a little-endian number.
func loadGram(b []byte, q int) uint64 {
	if len(b) >= gramLen {
		return binary.LittleEndian.Uint64(b) & (^uint64(0) >> (64 - 8*q))
	}
	var v uint64
	for i := q - 1; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	return v
}

// samplerHash maps a gram to its bit of a formSampler's filter.
func samplerHash(v uint64) uint32 {
	return uint32((v*0x9e3779b97f4a7c15)>>49) % samplerBits
}

// containsAny reports whether any of forms (those f was made from)
// occurs in s.
func (f *formSampler) containsAny(s []byte, forms [][]byte) bool {
	bits, q, stride := &f.bits, f.q, f.stride
	for j := 0; j+q <= len(s); j += stride {
		if h := samplerHash(loadGram(s[j:], q)); bits[h/64]&(1<<(h%64)) == 0 {
			continue
		}
		for p := max(0, j-stride+1); p <= j; p++ {
			if !f.starts[s[p]] {
				continue
			}
			for _, form := range forms {
				if bytes.HasPrefix(s[p:], form) {
					return true
				}
			}
		}
	}
	return false
}

// containsEach reports whether any of forms occurs in s, one pass per
// form: the gramFilter's check of the window around a hit.
func containsEach(s []byte, forms [][]byte) bool {
	for _, f := range forms {
		if bytes.Contains(s, f) {
			return true
		}
	}
	return false
}

// gramLen is the length of the grams a gramFilter indexes: eight bytes,
// read as one uint64.
const gramLen = 8

// minFilteredForm is the shortest form a gramFilter serves: with shorter
// forms its stride would be too short to pay, and the forms are searched
// one pass each.
const minFilteredForm = 2 * gramLen

// A gramFilter finds every occurrence of forms at least minFilteredForm
// long while reading only every stride-th gram of a text. Every gram
// (every eight bytes at every offset) of every form is in grams. An
// occurrence of a form of length at least short covers the positions
// p..p+short-1, so some multiple j of stride = short-gramLen+1 lies in
// p..p+stride-1, and the gram at j ends by p+short: it lies inside the
// occurrence, so it is one of grams. The filter looks up the gram at
// every multiple of stride (a bit set first, then the sorted grams), and
// on a hit searches the window around it that any occurrence through it
// lies in, form by form. A miss everywhere proves no form occurs.
type gramFilter struct {
	stride int // short - gramLen + 1
	long   int // the length of the longest form
	bits   [1 << 10]uint64
	grams  []uint64 // sorted, without duplicates
}

// newGramFilter returns the filter of forms, or nil when a form is
// shorter than minFilteredForm.
func newGramFilter(forms [][]byte) *gramFilter {
	short, long, n := len(forms[0]), 0, 0
	for _, f := range forms {
		short, long, n = min(short, len(f)), max(long, len(f)), n+len(f)-gramLen+1
	}
	if short < minFilteredForm {
		return nil
	}
	g := &gramFilter{stride: short - gramLen + 1, long: long, grams: make([]uint64, 0, n)}
	for _, f := range forms {
		for i := 0; i+gramLen <= len(f); i++ {
			v := binary.LittleEndian.Uint64(f[i:])
			h := gramHash(v)
			g.bits[h/64] |= 1 << (h % 64)
			g.grams = append(g.grams, v)
		}
	}
	slices.Sort(g.grams)
	g.grams = slices.Compact(g.grams)
	return g
}

// gramHash maps a gram to a bit of gramFilter.bits.
func gramHash(v uint64) uint32 { return uint32((v * 0x9e3779b97f4a7c15) >> 48) }

// containsAny reports whether any of forms (those g was made from)
// occurs in s.
func (g *gramFilter) containsAny(s []byte, forms [][]byte) bool {
	for j := 0; j+gramLen <= len(s); j += g.stride {
		v := binary.LittleEndian.Uint64(s[j:])
		h := gramHash(v)
		if g.bits[h/64]&(1<<(h%64)) == 0 {
			continue
		}
		if _, ok := slices.BinarySearch(g.grams, v); !ok {
			continue
		}
		if containsEach(s[max(0, j+gramLen-g.long):min(len(s), j+g.long)], forms) {
			return true
		}
	}
	return false
}
