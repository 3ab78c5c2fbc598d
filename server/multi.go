package server

// Multi is a connection's transaction in the making: the commands queued since MULTI. The
// connection's event loop owns it while commands are queued; EXEC and DISCARD take it over
// (Client.TakeMulti) and it is never touched by the loop again.
type Multi struct {
	// Commands are the queued commands' arguments (args[0] is the name), in order. They
	// alias arena: copies owned by the Multi, since the input buffer they came from is
	// reused.
	Commands [][][]byte
	// Aborted: a command was refused while queueing (unknown, wrong arity, not allowed in a
	// transaction): EXEC answers EXECABORT and runs nothing.
	Aborted bool
	// MayWrite: a queued command may write (CLIENT PAUSE WRITE holds such an EXEC back).
	MayWrite bool
	// ChangesConn: a queued command changes the connection's state (SELECT, CLIENT SETNAME,
	// …), which the commands after EXEC must see: the reactor dispatches nothing behind such
	// an EXEC until it ran.
	ChangesConn bool

	arena []byte
	size  int64 // bytes the queued commands hold (see Size)
}

// Size returns the bytes the queued commands hold: arguments and their slice headers. The
// reactor bounds it as it bounds a client's query buffer.
func (m *Multi) Size() int64 { return m.size }

// Queue appends a copy of args to the transaction.
func (m *Multi) Queue(args [][]byte, mayWrite, changesConn bool) {
	n := 0
	for _, a := range args {
		n += len(a)
	}
	// Arguments are copied into chunks of at least 4 KiB; a chunk is never moved, so the
	// commands already queued keep pointing into it.
	if cap(m.arena)-len(m.arena) < n {
		m.arena = make([]byte, 0, max(n, 4096))
	}
	queued := make([][]byte, len(args))
	for i, a := range args {
		off := len(m.arena)
		m.arena = append(m.arena, a...)
		queued[i] = m.arena[off:len(m.arena):len(m.arena)]
	}
	m.Commands = append(m.Commands, queued)
	m.size += int64(n + 24*len(args) + 24)
	m.MayWrite = m.MayWrite || mayWrite
	m.ChangesConn = m.ChangesConn || changesConn
}
