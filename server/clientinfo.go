package server

import (
	"strconv"
	"time"
)

// AppendInfo appends the connection cl as CLIENT LIST and CLIENT INFO show it in Redis 7.0
// (ACL LOG's client-info too). self says cl is the connection running the command, whose
// loop-owned fields may be read directly; for others the published copies are used. Fields
// shardis does not measure are 0.
func (cl *Client) AppendInfo(b []byte, self bool, now time.Time) []byte {
	pdb, presp, pub, multi := cl.Published()
	db, resp := int64(pdb), int64(presp)
	if self {
		multi = -1
		if cl.Multi != nil {
			multi = len(cl.Multi.Commands)
			pub |= PubMulti
		}
		db = int64(cl.DB)
		resp = 2
		if cl.RESP3 {
			resp = 3
		}
	}
	var qbuf, omem int
	if cl.Buffers != nil {
		qbuf, omem = cl.Buffers()
	}
	b = append(b, "id="...)
	b = strconv.AppendInt(b, cl.ID, 10)
	b = append(b, " addr="...)
	b = append(b, cl.Addr...)
	b = append(b, " laddr="...)
	b = append(b, cl.LAddr...)
	b = append(b, " fd="...)
	b = strconv.AppendInt(b, int64(cl.FD), 10)
	b = append(b, " name="...)
	b = append(b, cl.Name()...)
	b = append(b, " age="...)
	b = strconv.AppendInt(b, int64(now.Sub(cl.Created)/time.Second), 10)
	b = append(b, " idle="...)
	b = strconv.AppendInt(b, max(0, (now.UnixMilli()-cl.LastSeen())/1000), 10)
	b = append(b, " flags="...)
	n := len(b)
	if cl.ReplicaLink() {
		b = append(b, 'S')
	}
	if pub&PubMonitor != 0 {
		b = append(b, 'O')
	}
	if cl.PubSub() {
		b = append(b, 'P')
	}
	if pub&PubMulti != 0 {
		b = append(b, 'x')
	}
	if cl.Blocked() != nil || cl.PauseHeld() {
		b = append(b, 'b')
	}
	if cl.Track != nil {
		if o, on := cl.Track.Mode(); on {
			b = append(b, 't')
			if cl.Track.BrokenRedirect() {
				b = append(b, 'R')
			}
			if o.BCAST {
				b = append(b, 'B')
			}
		}
	}
	if pub&PubClosing != 0 {
		b = append(b, 'c')
	}
	if cl.Unix {
		b = append(b, 'U')
	}
	if pub&PubNoEvict != 0 {
		b = append(b, 'e')
	}
	if pub&PubNoTouch != 0 {
		b = append(b, 'T')
	}

	if len(b) == n {
		b = append(b, 'N')
	}
	b = append(b, " db="...)
	b = strconv.AppendInt(b, db, 10)
	b = append(b, " sub="...)
	b = strconv.AppendInt(b, int64(cl.Subs.Load()), 10)
	b = append(b, " psub="...)
	b = strconv.AppendInt(b, int64(cl.PSubs.Load()), 10)
	b = append(b, " ssub="...)
	b = strconv.AppendInt(b, int64(cl.SSubs.Load()), 10)
	b = append(b, " multi="...)
	b = strconv.AppendInt(b, int64(multi), 10)
	b = append(b, " qbuf="...)
	b = strconv.AppendInt(b, int64(qbuf), 10)
	b = append(b, " qbuf-free=0 argv-mem=0 multi-mem=0 rbs=0 rbp=0 obl=0 oll=0 omem="...)
	b = strconv.AppendInt(b, int64(omem), 10)
	b = append(b, " tot-mem="...)
	b = strconv.AppendInt(b, int64(qbuf+omem), 10)
	b = append(b, " events=r cmd="...)
	b = append(b, cl.LastCommand()...)
	b = append(b, " user="...)
	b = append(b, cl.UserName()...)
	b = append(b, " redir="...)
	b = strconv.AppendInt(b, cl.TrackingRedirect(), 10)
	b = append(b, " resp="...)
	b = strconv.AppendInt(b, resp, 10)
	return append(b, '\n')
}

// TrackingRedirect is what CLIENT GETREDIR and CLIENT LIST's redir= show: the redirect
// target's id, 0 when tracking without one, -1 when not tracking.
func (cl *Client) TrackingRedirect() int64 {
	if cl.Track == nil {
		return -1
	}
	o, on := cl.Track.Mode()
	if !on {
		return -1
	}
	return o.Redirect
}
