package modelroute

// Waiting returns how many requests wait in m's Reserve.
func Waiting(m *Meter) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.waiting
}

// GeminiSSEQuery is geminiSSEQuery, the query of a Gemini stream.
const GeminiSSEQuery = geminiSSEQuery
