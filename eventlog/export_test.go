package eventlog

import "time"

// RewriteMemory exposes MemoryStore.rewrite to the conformance test.
func RewriteMemory(m *MemoryStore, session string, edit func([]Record) []Record) {
	m.rewrite(session, edit)
}

// Waiting returns how many appends to session wait for a group commit.
func Waiting(l *Log, session string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	if q := l.queues[session]; q != nil {
		return len(q.waiting)
	}
	return 0
}

// ForgeEnvelope returns the envelope of a skip event at seq of session
// linking to prev, and its chain hash: what anyone who can write a store
// can compute, since the chain is not keyed.
func ForgeEnvelope(session string, seq uint64, prev Hash) ([]byte, Hash) {
	env := envelope{session: session, seq: seq, prev: prev, event: Event{Kind: KindSkip, Code: "forged", Time: time.Unix(1, 0).UTC()}}
	enc := env.encode()
	return enc, chainHash(enc)
}

// ForgeEnvelopeCode is ForgeEnvelope with the skip event's code.
func ForgeEnvelopeCode(session string, seq uint64, prev Hash, code string) ([]byte, Hash) {
	env := envelope{session: session, seq: seq, prev: prev, event: Event{Kind: KindSkip, Code: code, Time: time.Unix(1, 0).UTC()}}
	enc := env.encode()
	return enc, chainHash(enc)
}

// ForgeShredEnvelope returns the envelope of a shred event at seq of
// session, linking to prev and naming shredOf, and its chain hash.
func ForgeShredEnvelope(session string, seq uint64, prev Hash, shredOf uint64) ([]byte, Hash) {
	env := envelope{session: session, seq: seq, prev: prev, event: Event{Kind: KindShred, Time: time.Unix(1, 0).UTC()}, shredOf: shredOf}
	enc := env.encode()
	return enc, chainHash(enc)
}
