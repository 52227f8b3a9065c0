package idem

// Waiters reports how many watchers of key m holds (for tests).
func Waiters(m *MemoryBackend, key string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.waiters[key])
}
