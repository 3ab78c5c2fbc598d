package cmds

func init() {
	register(
		&Command{Name: "ping", Arity: -1, Flags: []string{"fast", "sentinel"}, ACL: []string{"fast", "connection"},
			Group: "connection", Since: "1.0.0", Summary: "Returns the server's liveliness response.",
			Complexity: "O(1)", Syntax: "[message]", Exec: ExecConn, Run: ping},
		&Command{Name: "echo", Arity: 2, Flags: []string{"fast"}, ACL: []string{"fast", "connection"},
			Group: "connection", Since: "1.0.0", Summary: "Returns the given string.",
			Complexity: "O(1)", Syntax: "message", Exec: ExecConn, Run: echo},
	)
}

func ping(c *Ctx) {
	switch len(c.Args) {
	case 1:
		c.W.Simple("PONG")
	case 2:
		c.W.Bulk(c.Args[1])
	default:
		c.Error(ArityError(c.Cmd))
	}
}

func echo(c *Ctx) { c.W.Bulk(c.Args[1]) }
