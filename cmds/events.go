package cmds

import "shardis/pubsub"

// Keyspace events (notify-keyspace-events). A write command reports what it did, as Redis's
// notifyKeyspaceEvent calls do, with Redis's event names and in Redis's order; the transaction
// keeps them and publishes them once it committed (shard/events.go). The shard itself reports
// "new" (a key added), "expired" (lazy expiry and the TTL walk) and "keymiss" (a read lookup
// that found nothing: every Meta lookup of a read-only command, Tx.MetaRead in a write).
//
// While no class is enabled an event costs one atomic load.

// notify reports event of class about key in the command's database.
func (c *Ctx) notify(class pubsub.Class, event string, key []byte) {
	c.Tx.Notify(uint32(class), event, c.DB, key)
}

// notifyIn reports event of class about key in logical database db (MOVE, COPY … DB).
func (c *Ctx) notifyIn(class pubsub.Class, event string, db int, key []byte) {
	c.Tx.Notify(uint32(class), event, db, key)
}
