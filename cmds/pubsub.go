package cmds

import (
	"shardis/cmdspec"
	"shardis/pubsub"
	"shardis/server"
)

// Pub/sub: SUBSCRIBE and friends change the connection's subscriptions in the channel
// registry (package pubsub) and run in the event loop; PUBLISH delivers to every subscriber
// through the registry, whichever loop it lives on (each subscriber's loop writes its
// messages, see reactor). Replies and errors are Redis 7.0's.

func init() {
	Register(
		&Command{Name: "subscribe", Arity: -2, Flags: []string{"pubsub", "noscript", "loading", "stale"},
			ACL: []string{"pubsub", "slow"}, Group: "pubsub", Since: "2.0.0",
			Summary:    "Listen for messages published to the given channels",
			Complexity: "O(N) where N is the number of channels to subscribe to.",
			Syntax:     "channel [channel ...]", Exec: ExecConn, Channels: SubscribeChannels,
			Traits: TraitAfterPending | TraitSubscribedMode | TraitRepliesWithPushes, RunServer: subscribeCommand},
		&Command{Name: "unsubscribe", Arity: -1, Flags: []string{"pubsub", "noscript", "loading", "stale"},
			ACL: []string{"pubsub", "slow"}, Group: "pubsub", Since: "2.0.0",
			Summary:    "Stop listening for messages posted to the given channels",
			Complexity: "O(N) where N is the number of clients already subscribed to a channel.",
			Syntax:     "[channel [channel ...]]", Exec: ExecConn,
			Traits: TraitAfterPending | TraitSubscribedMode | TraitRepliesWithPushes, RunServer: unsubscribeCommand},
		&Command{Name: "psubscribe", Arity: -2, Flags: []string{"pubsub", "noscript", "loading", "stale"},
			ACL: []string{"pubsub", "slow"}, Group: "pubsub", Since: "2.0.0",
			Summary:    "Listen for messages published to channels matching the given patterns",
			Complexity: "O(N) where N is the number of patterns the client is already subscribed to.",
			Syntax:     "pattern [pattern ...]", Exec: ExecConn, Channels: SubscribePatterns,
			Traits: TraitAfterPending | TraitSubscribedMode | TraitRepliesWithPushes, RunServer: psubscribeCommand},
		&Command{Name: "punsubscribe", Arity: -1, Flags: []string{"pubsub", "noscript", "loading", "stale"},
			ACL: []string{"pubsub", "slow"}, Group: "pubsub", Since: "2.0.0",
			Summary:    "Stop listening for messages posted to channels matching the given patterns",
			Complexity: "O(N+M) where N is the number of patterns the client is already subscribed and M is the number of total patterns subscribed in the system (by any client).",
			Syntax:     "[pattern [pattern ...]]", Exec: ExecConn,
			Traits: TraitAfterPending | TraitSubscribedMode | TraitRepliesWithPushes, RunServer: punsubscribeCommand},
		&Command{Name: "ssubscribe", Arity: -2, Flags: []string{"pubsub", "noscript", "loading", "stale"},
			ACL: []string{"pubsub", "slow"}, Group: "pubsub",
			Since: "7.0.0", Summary: "Listen for messages published to the given shard channels",
			Complexity: "O(N) where N is the number of shard channels to subscribe to.",
			Syntax:     "shardchannel [shardchannel ...]",
			KeySpecs:   []cmdspec.KeySpec{{Flags: cmdspec.NotKey, Begin: cmdspec.Index(1), Find: cmdspec.Range(-1, 1, 0)}},
			Exec:       ExecConn, Channels: SubscribeChannels, Traits: TraitAfterPending | TraitSubscribedMode | TraitRepliesWithPushes,
			RunServer: ssubscribeCommand},
		&Command{Name: "sunsubscribe", Arity: -1, Flags: []string{"pubsub", "noscript", "loading", "stale"},
			ACL: []string{"pubsub", "slow"}, Group: "pubsub",
			Since: "7.0.0", Summary: "Stop listening for messages posted to the given shard channels",
			Complexity: "O(N) where N is the number of clients already subscribed to a shard channel.",
			Syntax:     "[shardchannel [shardchannel ...]]",
			KeySpecs:   []cmdspec.KeySpec{{Flags: cmdspec.NotKey, Begin: cmdspec.Index(1), Find: cmdspec.Range(-1, 1, 0)}},
			Exec:       ExecConn, Traits: TraitAfterPending | TraitSubscribedMode | TraitRepliesWithPushes, RunServer: sunsubscribeCommand},
		&Command{Name: "publish", Arity: 3, Flags: []string{"pubsub", "loading", "stale", "fast", "may_replicate"},
			ACL: []string{"pubsub", "fast"}, Group: "pubsub", Since: "2.0.0",
			Summary:    "Post a message to a channel",
			Complexity: "O(N+M) where N is the number of clients subscribed to the receiving channel and M is the total number of subscribed patterns (by any client).",
			Syntax:     "channel message", Exec: ExecServer, Channels: PublishChannel,
			Traits: TraitLoopWhenIdle | TraitUnconfined, RunServer: publishCommand},
		&Command{Name: "spublish", Arity: 3, Flags: []string{"pubsub", "loading", "stale", "fast", "may_replicate"},
			ACL: []string{"pubsub", "fast"}, Group: "pubsub",
			Since: "7.0.0", Summary: "Post a message to a shard channel",
			Complexity: "O(N) where N is the number of clients subscribed to the receiving shard channel.",
			Syntax:     "shardchannel message",
			KeySpecs:   []cmdspec.KeySpec{{Flags: cmdspec.NotKey, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)}},
			Exec:       ExecServer, Channels: PublishChannel, Traits: TraitLoopWhenIdle | TraitUnconfined,
			RunServer: spublishCommand},
		&Command{Name: "pubsub", Arity: -2, ACL: []string{"slow"}, Group: "pubsub", Since: "2.8.0",
			Summary: "A container for Pub/Sub commands", Complexity: "Depends on subcommand.",
			Exec: ExecConn,
			Subs: map[string]*Command{
				"channels": {Arity: -2, Flags: []string{"pubsub", "loading", "stale"}, ACL: []string{"pubsub", "slow"},
					Since: "2.8.0", Summary: "List active channels",
					Complexity: "O(N) where N is the number of active channels, and assuming constant time pattern matching (relatively short channels and patterns)",
					Syntax:     "[pattern]", Exec: ExecConn, RunServer: pubsubChannels},
				"help": {Arity: 2, Flags: []string{"loading", "stale"}, ACL: []string{"slow"}, Since: "6.2.0",
					Summary: "Show helpful text about the different subcommands", Complexity: "O(1)",
					Exec: ExecConn, Run: pubsubHelp},
				"numpat": {Arity: 2, Flags: []string{"pubsub", "loading", "stale"}, ACL: []string{"pubsub", "slow"},
					Since: "2.8.0", Summary: "Get the count of unique patterns pattern subscriptions",
					Complexity: "O(1)", Exec: ExecConn, RunServer: pubsubNumPat},
				"numsub": {Arity: -2, Flags: []string{"pubsub", "loading", "stale"}, ACL: []string{"pubsub", "slow"},
					Since: "2.8.0", Summary: "Get the count of subscribers for channels",
					Complexity: "O(N) for the NUMSUB subcommand, where N is the number of requested channels",
					Syntax:     "[channel [channel ...]]", Exec: ExecConn, RunServer: pubsubNumSub},
				"shardchannels": {Arity: -2, Flags: []string{"pubsub", "loading", "stale"}, ACL: []string{"pubsub", "slow"},
					Since: "7.0.0", Summary: "List active shard channels",
					Complexity: "O(N) where N is the number of active shard channels, and assuming constant time pattern matching (relatively short shard channels).",
					Syntax:     "[pattern]", Exec: ExecConn, RunServer: pubsubShardChannels},
				"shardnumsub": {Arity: -2, Flags: []string{"pubsub", "loading", "stale"}, ACL: []string{"pubsub", "slow"},
					Since: "7.0.0", Summary: "Get the count of subscribers for shard channels",
					Complexity: "O(N) for the SHARDNUMSUB subcommand, where N is the number of requested shard channels",
					Syntax:     "[shardchannel [shardchannel ...]]", Exec: ExecConn, RunServer: pubsubShardNumSub},
			}},
	)
	OnConnReset(func(c *Ctx, srv *server.Server) {
		if cl := c.Client; cl != nil && cl.Sub != nil {
			srv.PubSub.UnsubscribeAll(cl.Sub)
			cl.Subs.Store(0)
			cl.PSubs.Store(0)
			cl.SSubs.Store(0)
			cl.Sub.RESP3.Store(false)
		}
	})
}

// subscription describes one kind's commands: the words of their replies.
type subscription struct {
	kind            pubsub.Kind
	subWord, unWord string
}

var (
	channelSubs = subscription{pubsub.Channel, "subscribe", "unsubscribe"}
	patternSubs = subscription{pubsub.Pattern, "psubscribe", "punsubscribe"}
	shardSubs   = subscription{pubsub.ShardChannel, "ssubscribe", "sunsubscribe"}
)

func subscribeCommand(c *Ctx, srv *server.Server)   { subscribeTo(c, srv, channelSubs) }
func psubscribeCommand(c *Ctx, srv *server.Server)  { subscribeTo(c, srv, patternSubs) }
func unsubscribeCommand(c *Ctx, srv *server.Server) { unsubscribeFrom(c, srv, channelSubs) }
func punsubscribeCommand(c *Ctx, srv *server.Server) {
	unsubscribeFrom(c, srv, patternSubs)
}
func sunsubscribeCommand(c *Ctx, srv *server.Server) { unsubscribeFrom(c, srv, shardSubs) }

func ssubscribeCommand(c *Ctx, srv *server.Server) {
	if c.InTransaction {
		// Redis runs EXEC's commands as a client that may not block, which SSUBSCRIBE refuses.
		c.Error("ERR SSUBSCRIBE isn't allowed for a DENY BLOCKING client")
		return
	}
	subscribeTo(c, srv, shardSubs)
}

// subscriberOf returns the connection's subscriber, or nil (binlog replay, internal calls).
func subscriberOf(c *Ctx) *pubsub.Subscriber {
	if c.Client == nil {
		return nil
	}
	return c.Client.Sub
}

// subCount is the count a (un)subscribe reply carries: channels and patterns together, shard
// channels apart, as Redis counts them.
func subCount(c *Ctx, kind pubsub.Kind) int64 {
	cl := c.Client
	if kind == pubsub.ShardChannel {
		return int64(cl.SSubs.Load())
	}
	return int64(cl.Subs.Load() + cl.PSubs.Load())
}

// setCount stores the connection's count of kind for CLIENT LIST and the subscribed-mode
// check.
func setCount(c *Ctx, kind pubsub.Kind, n int) {
	cl := c.Client
	switch kind {
	case pubsub.Channel:
		cl.Subs.Store(int32(n))
	case pubsub.Pattern:
		cl.PSubs.Store(int32(n))
	default:
		cl.SSubs.Store(int32(n))
	}
}

func subscribeTo(c *Ctx, srv *server.Server, s subscription) {
	sub := subscriberOf(c)
	if sub == nil {
		c.Error("ERR " + s.subWord + " is not available here")
		return
	}
	sub.RESP3.Store(c.W.RESP3)
	reg := &srv.PubSub
	for _, name := range c.Args[1:] {
		reg.Subscribe(sub, s.kind, string(name))
		setCount(c, s.kind, reg.Count(sub, s.kind))
		c.W.PushLen(3)
		c.W.BulkString(s.subWord)
		c.W.Bulk(name)
		c.W.Int(subCount(c, s.kind))
	}
}

func unsubscribeFrom(c *Ctx, srv *server.Server, s subscription) {
	sub := subscriberOf(c)
	if sub == nil {
		c.Error("ERR " + s.unWord + " is not available here")
		return
	}
	reg := &srv.PubSub
	names := c.Args[1:]
	if len(names) == 0 {
		for _, name := range reg.Names(sub, s.kind) {
			names = append(names, []byte(name))
		}
		if len(names) == 0 {
			c.W.PushLen(3)
			c.W.BulkString(s.unWord)
			c.W.Null()
			c.W.Int(subCount(c, s.kind))
			return
		}
	}
	for _, name := range names {
		reg.Unsubscribe(sub, s.kind, string(name))
		setCount(c, s.kind, reg.Count(sub, s.kind))
		c.W.PushLen(3)
		c.W.BulkString(s.unWord)
		c.W.Bulk(name)
		c.W.Int(subCount(c, s.kind))
	}
}

func publishCommand(c *Ctx, srv *server.Server) {
	c.W.Int(int64(srv.PubSub.Publish(c.Args[1], c.Args[2])))
}

func spublishCommand(c *Ctx, srv *server.Server) {
	c.W.Int(int64(srv.PubSub.PublishShard(c.Args[1], c.Args[2])))
}

func pubsubChannelList(c *Ctx, srv *server.Server, kind pubsub.Kind) {
	if len(c.Args) > 3 {
		c.Error("ERR unknown subcommand or wrong number of arguments for '" + string(c.Args[1]) + "'. Try PUBSUB HELP.")
		return
	}
	var pattern []byte
	if len(c.Args) == 3 {
		pattern = c.Args[2]
	}
	names := srv.PubSub.Channels(kind, pattern)
	c.W.ArrayLen(len(names))
	for _, n := range names {
		c.W.BulkString(n)
	}
}

func pubsubChannels(c *Ctx, srv *server.Server)      { pubsubChannelList(c, srv, pubsub.Channel) }
func pubsubShardChannels(c *Ctx, srv *server.Server) { pubsubChannelList(c, srv, pubsub.ShardChannel) }

func pubsubNumSubOf(c *Ctx, srv *server.Server, kind pubsub.Kind) {
	c.W.ArrayLen(2 * (len(c.Args) - 2))
	for _, name := range c.Args[2:] {
		c.W.Bulk(name)
		c.W.Int(int64(srv.PubSub.NumSub(kind, name)))
	}
}

func pubsubNumSub(c *Ctx, srv *server.Server)      { pubsubNumSubOf(c, srv, pubsub.Channel) }
func pubsubShardNumSub(c *Ctx, srv *server.Server) { pubsubNumSubOf(c, srv, pubsub.ShardChannel) }

func pubsubNumPat(c *Ctx, srv *server.Server) { c.W.Int(int64(srv.PubSub.NumPat())) }

func pubsubHelp(c *Ctx) {
	HelpReply(c,
		"CHANNELS [<pattern>]",
		"    Return the currently active channels matching a <pattern> (default: '*').",
		"NUMPAT",
		"    Return number of subscriptions to patterns.",
		"NUMSUB [<channel> ...]",
		"    Return the number of subscribers for the specified channels, excluding",
		"    pattern subscriptions(default: no channels).",
		"SHARDCHANNELS [<pattern>]",
		"    Return the currently active shard level channels matching a <pattern> (default: '*').",
		"SHARDNUMSUB [<shardchannel> ...]",
		"    Return the number of subscribers for the specified shard level channel(s)",
		"HELP",
		"    Prints this help.")
}
