package cmds

import "shardis/codec"

func init() {
	register(
		&Command{Name: "get", Arity: 2, Flags: []string{"readonly", "fast"}, ACL: []string{"read", "string", "fast"},
			FirstKey: 1, LastKey: 1, Step: 1, Group: "string", Since: "1.0.0",
			Summary: "Returns the string value of a key.", Complexity: "O(1)", Syntax: "key", Run: get},
		&Command{Name: "set", Arity: -3, Flags: []string{"write", "denyoom"}, ACL: []string{"write", "string", "slow"},
			FirstKey: 1, LastKey: 1, Step: 1, Group: "string", Since: "1.0.0",
			Summary: "Sets the string value of a key, ignoring its type. The key is created if it doesn't exist.",
			Complexity: "O(1)", Syntax: "key value [NX | XX] [GET] [EX seconds | PX milliseconds | EXAT unix-time-seconds | PXAT unix-time-milliseconds | KEEPTTL]",
			Run: set},
	)
}

func get(c *Ctx) {
	m, ok := c.Tx.Meta(c.DB, c.Args[1])
	switch {
	case !ok:
		c.W.Null()
	case m.Type != codec.TypeString:
		c.Error(errWrongType)
	default:
		c.W.Bulk(m.Value)
	}
}

func set(c *Ctx) {
	key := c.Args[1]
	c.Tx.SetMeta(c.DB, key, &codec.Meta{Type: codec.TypeString, Value: c.Args[2]})
	c.Tx.Log(c.DB, key, c.Args...)
	c.W.OK()
}
