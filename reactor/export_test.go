package reactor

// Exported for the tests of package reactor_test.
var (
	RefusedByProtectedMode = refusedByProtectedMode
	ProtectedModeRefusal   = protectedModeRefusal
)

// Wakes returns how many times a connection's event loop was woken (conn.wake).
func (s *Server) Wakes() int64 { return s.wakes.Load() }
