package reactor

// Exported for the tests of package reactor_test.
var (
	RefusedByProtectedMode = refusedByProtectedMode
	ProtectedModeRefusal   = protectedModeRefusal
)
