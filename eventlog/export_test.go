package eventlog

// RewriteMemory exposes MemoryStore.rewrite to the conformance test.
func RewriteMemory(m *MemoryStore, session string, edit func([]Record) []Record) {
	m.rewrite(session, edit)
}
