package admin

import (
	"shardis/cmds"
	"shardis/codec"
	"shardis/server"
	"shardis/tracking"
)

// CLIENT TRACKING, CACHING, GETREDIR and TRACKINGINFO: the connection's side of client-side
// caching. The table of tracked keys and the invalidations are package tracking's; the
// executor remembers the keys a tracking connection reads (executor.remember).

func init() {
	cmds.OnConnReset(func(c *cmds.Ctx, srv *server.Server) {
		c.Client.TrackCaching = false
		if c.Client.Track != nil {
			srv.Tracking.Disable(c.Client.Track)
		}
	})
}

// clientTracking is CLIENT TRACKING ON|OFF [REDIRECT id] [BCAST] [PREFIX p ...] [OPTIN]
// [OPTOUT] [NOLOOP], checked in Redis 7.0's order: the options first, then what ON allows.
func clientTracking(c *cmds.Ctx, srv *server.Server) {
	var o tracking.Options
	args := c.Args
	for j := 3; j < len(args); j++ {
		more := j+1 < len(args)
		switch {
		case cmds.EqualFold(args[j], "redirect") && more:
			j++
			if o.Redirect != 0 {
				c.Error("ERR A client can only redirect to a single other client")
				return
			}
			id, ok := codec.ParseInt(args[j])
			if !ok {
				c.Error(cmds.ErrNotInt)
				return
			}
			if srv.Clients.Get(id) == nil {
				c.Error("ERR The client ID you want redirect to does not exist")
				return
			}
			o.Redirect = id
		case cmds.EqualFold(args[j], "bcast"):
			o.BCAST = true
		case cmds.EqualFold(args[j], "optin"):
			o.OptIn = true
		case cmds.EqualFold(args[j], "optout"):
			o.OptOut = true
		case cmds.EqualFold(args[j], "noloop"):
			o.NoLoop = true
		case cmds.EqualFold(args[j], "prefix") && more:
			j++
			o.Prefixes = append(o.Prefixes, string(args[j]))
		default:
			c.Error(cmds.ErrSyntax)
			return
		}
	}
	cl := c.Client
	switch {
	case cmds.EqualFold(args[2], "on"):
		if err := srv.Tracking.Enable(cl.Track, o); err != nil {
			c.Error("ERR " + err.Error())
			return
		}
	case cmds.EqualFold(args[2], "off"):
		srv.Tracking.Disable(cl.Track)
		cl.TrackCaching = false
	default:
		c.Error(cmds.ErrSyntax)
		return
	}
	c.W.OK()
}

// clientCaching is CLIENT CACHING YES|NO: in OPTIN mode YES makes the next command's reads
// tracked, in OPTOUT mode NO makes them untracked.
func clientCaching(c *cmds.Ctx) {
	o, on := c.Client.Track.Mode()
	if !on {
		c.Error("ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or OPTOUT mode enabled")
		return
	}
	switch {
	case cmds.EqualFold(c.Args[2], "yes"):
		if !o.OptIn {
			c.Error("ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode.")
			return
		}
	case cmds.EqualFold(c.Args[2], "no"):
		if !o.OptOut {
			c.Error("ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.")
			return
		}
	default:
		c.Error(cmds.ErrSyntax)
		return
	}
	c.Client.TrackCaching = true
	c.W.OK()
}

func clientGetRedir(c *cmds.Ctx) { c.W.Int(c.Client.TrackingRedirect()) }

// clientTrackingInfo is CLIENT TRACKINGINFO: a map of the flags (a set), the redirect target
// and the BCAST prefixes, as Redis 7.0 answers it.
func clientTrackingInfo(c *cmds.Ctx) {
	o, on := c.Client.Track.Mode()
	flags := []string{"off"}
	if on {
		flags[0] = "on"
		if o.BCAST {
			flags = append(flags, "bcast")
		}
		if o.OptIn {
			flags = append(flags, "optin")
			if c.Client.TrackCaching {
				flags = append(flags, "caching-yes")
			}
		}
		if o.OptOut {
			flags = append(flags, "optout")
			if c.Client.TrackCaching {
				flags = append(flags, "caching-no")
			}
		}
		if o.NoLoop {
			flags = append(flags, "noloop")
		}
		if c.Client.Track.BrokenRedirect() {
			flags = append(flags, "broken_redirect")
		}
	}
	c.W.MapLen(3)
	c.W.BulkString("flags")
	c.W.SetLen(len(flags))
	for _, f := range flags {
		c.W.BulkString(f)
	}
	c.W.BulkString("redirect")
	c.W.Int(c.Client.TrackingRedirect())
	c.W.BulkString("prefixes")
	c.W.ArrayLen(len(o.Prefixes))
	for _, p := range o.Prefixes {
		c.W.BulkString(p)
	}
}
