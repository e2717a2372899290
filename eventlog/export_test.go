package eventlog

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
