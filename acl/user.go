package acl

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"slices"
	"strings"
	"sync/atomic"
)

// User is one ACL user. Its permissions are an immutable snapshot swapped whole by ACL
// SETUSER, so a connection's check (any goroutine) reads them with one atomic load.
type User struct {
	Name    string
	state   atomic.Pointer[userState]
	removed atomic.Bool // deleted (ACL DELUSER, ACL LOAD): its connections are closed
}

// Sanitize-payload flags (kept and shown; shardis's RESTORE always checks payloads).
const (
	sanitizeUnset = iota
	sanitizeOn
	sanitizeSkip
)

// userState is a user's flags, passwords and selectors. Never changed once stored in a
// User: a change is made on a copy (clone).
type userState struct {
	on        bool
	nopass    bool
	sanitize  int
	passwords []string // SHA-256 hex of each password, in the order added
	selectors []*selector
	// unrestricted: the root selector allows every command, key and channel, so no check
	// is needed (the default user's common case).
	unrestricted bool
}

func newUserState(t *Table, allChannels bool) *userState {
	s := newSelector(t)
	s.allChans = allChannels
	return &userState{selectors: []*selector{s}}
}

func (u *userState) clone() *userState {
	c := *u
	c.passwords = slices.Clone(u.passwords)
	c.selectors = make([]*selector, len(u.selectors))
	for i, s := range u.selectors {
		c.selectors[i] = s.clone()
	}
	return &c
}

func (u *userState) seal() *userState {
	r := u.selectors[0]
	u.unrestricted = r.allCommands && r.allKeys && r.allChans
	return u
}

// HashPassword returns the SHA-256 hex of a password, as ACL stores it.
func HashPassword(p []byte) string {
	sum := sha256.Sum256(p)
	return hex.EncodeToString(sum[:])
}

func validHash(h string) bool {
	if len(h) != 64 {
		return false
	}
	for i := 0; i < len(h); i++ {
		if c := h[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// apply applies one rule (op is not empty) and returns "" or Redis's reason for refusing
// it. allChannels is acl-pubsub-default (what "reset" restores).
func (u *userState) apply(t *Table, op string, allChannels bool) string {
	lower := strings.ToLower(op)
	switch {
	case lower == "on":
		u.on = true
	case lower == "off":
		u.on = false
	case lower == "skip-sanitize-payload":
		u.sanitize = sanitizeSkip
	case lower == "sanitize-payload":
		u.sanitize = sanitizeOn
	case lower == "nopass":
		u.nopass, u.passwords = true, nil
	case lower == "resetpass":
		u.nopass, u.passwords = false, nil
	case op[0] == '>' || op[0] == '#':
		h := op[1:]
		if op[0] == '>' {
			h = HashPassword([]byte(op[1:]))
		} else if !validHash(h) {
			return errBadHash
		}
		if !slices.Contains(u.passwords, h) {
			u.passwords = append(u.passwords, h)
		}
		u.nopass = false
	case op[0] == '<' || op[0] == '!':
		h := op[1:]
		if op[0] == '<' {
			h = HashPassword([]byte(op[1:]))
		} else if !validHash(h) {
			return errBadHash
		}
		i := slices.Index(u.passwords, h)
		if i < 0 {
			return errNoSuchPass
		}
		u.passwords = slices.Delete(u.passwords, i, i+1)
	case op[0] == '(' && op[len(op)-1] == ')':
		s := newSelector(t)
		for _, inner := range splitArgs(op[1 : len(op)-1]) {
			if inner == "" {
				continue
			}
			if msg := s.apply(t, inner); msg != "" {
				return msg
			}
		}
		u.selectors = append(u.selectors, s)
	case lower == "clearselectors":
		u.selectors = u.selectors[:1]
	case lower == "reset":
		u.nopass, u.passwords = false, nil
		root := u.selectors[0]
		root.allKeys, root.keys = false, nil
		root.allChans, root.chans = allChannels, nil
		u.on, u.sanitize = false, sanitizeOn
		u.selectors = u.selectors[:1]
		root.setAll(false)
	default:
		return u.selectors[0].apply(t, op)
	}
	return ""
}

// splitArgs splits a selector's inside into rules as Redis's sdssplitargs does: by spaces,
// with "double" (backslash escapes) and 'single' quotes. An unbalanced quote gives one
// rule that no rule parser accepts.
func splitArgs(s string) []string {
	var out []string
	i := 0
	for {
		for i < len(s) && isSpace(s[i]) {
			i++
		}
		if i >= len(s) {
			return out
		}
		var cur strings.Builder
		inDQ, inSQ := false, false
		for ; i < len(s); i++ {
			c := s[i]
			switch {
			case inDQ:
				if c == '\\' && i+1 < len(s) {
					i++
					switch s[i] {
					case 'n':
						cur.WriteByte('\n')
					case 'r':
						cur.WriteByte('\r')
					case 't':
						cur.WriteByte('\t')
					default:
						cur.WriteByte(s[i])
					}
				} else if c == '"' {
					inDQ = false
				} else {
					cur.WriteByte(c)
				}
				continue
			case inSQ:
				if c == '\'' {
					inSQ = false
				} else {
					cur.WriteByte(c)
				}
				continue
			case isSpace(c):
			case c == '"':
				inDQ = true
				continue
			case c == '\'':
				inSQ = true
				continue
			default:
				cur.WriteByte(c)
				continue
			}
			break
		}
		if inDQ || inSQ {
			return append(out, "\x00unbalanced")
		}
		out = append(out, cur.String())
	}
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

// MergeSelectors joins the selector rules spread over several arguments ("(~a", "+get)")
// into one, as Redis does. bad is the index of an unmatched '(' argument, or -1.
func MergeSelectors(ops []string) (merged []string, bad int) {
	open := -1
	var cur string
	for i, op := range ops {
		if open < 0 && len(op) > 0 && op[0] == '(' && op[len(op)-1] != ')' {
			open, cur = i, op
			continue
		}
		if open >= 0 {
			cur += " " + op
			if len(op) > 0 && op[len(op)-1] == ')' {
				merged = append(merged, cur)
				open = -1
			}
			continue
		}
		merged = append(merged, op)
	}
	if open >= 0 {
		return nil, open
	}
	return merged, -1
}

// Unrestricted reports whether the user may run every command on every key and channel: the
// check a connection makes before each command, one atomic load.
func (u *User) Unrestricted() bool { return u.state.Load().unrestricted }

// Enabled reports whether the user is on.
func (u *User) Enabled() bool { return u.state.Load().on }

// NoPass reports whether the user takes any password.
func (u *User) NoPass() bool { return u.state.Load().nopass }

// Removed reports whether the user was deleted.
func (u *User) Removed() bool { return u.removed.Load() }

// checkPassword reports whether pass authenticates as u.
func (u *User) checkPassword(pass []byte) bool {
	st := u.state.Load()
	if !st.on {
		return false
	}
	if st.nopass {
		return true
	}
	h := HashPassword(pass)
	ok := false
	for _, p := range st.passwords {
		if subtle.ConstantTimeCompare([]byte(p), []byte(h)) == 1 {
			ok = true
		}
	}
	return ok
}

// Check returns whether u may run r, and the position in r.Args of the key or channel that
// was denied. Every selector is tried; when all deny, the most relevant reason is reported
// (a channel over a key over the command), as Redis does.
func (u *User) Check(r *Request) (Reason, int) {
	st := u.state.Load()
	if st.unrestricted {
		return Allowed, 0
	}
	worst, pos := DeniedCommand, 0
	for _, s := range st.selectors {
		why, at := s.check(r)
		if why == Allowed {
			return Allowed, 0
		}
		if why > worst || why == worst && at > pos {
			worst, pos = why, at
		}
	}
	return worst, pos
}

// FullKeyAccess reports whether some selector of u both permits r and grants need on every
// key (allkeys, or the pattern "*" with that access): Redis's
// ACLUserCheckCmdWithUnrestrictedKeyAccess, which SORT asks before it follows BY and GET
// patterns to keys its key specs cannot name.
func (u *User) FullKeyAccess(r *Request, need Perm) bool {
	st := u.state.Load()
	if st.unrestricted {
		return true
	}
	for _, s := range st.selectors {
		if s.allKeysFor(need) {
			if why, _ := s.check(r); why == Allowed {
				return true
			}
		}
	}
	return false
}

// NeedsKeys reports whether checking a command needs its keys and channels (some selector
// does not allow every key or every channel).
func (u *User) NeedsKeys() bool {
	for _, s := range u.state.Load().selectors {
		if !s.allKeys || !s.allChans {
			return true
		}
	}
	return false
}

// Describe is the user as ACL LIST and the ACL file write it, after "user <name> ".
func (u *User) Describe() string {
	st := u.state.Load()
	t := Commands()
	var b strings.Builder
	for _, f := range st.flags() {
		b.WriteString(f)
		b.WriteByte(' ')
	}
	for _, p := range st.passwords {
		b.WriteString("#" + p + " ")
	}
	for i, s := range st.selectors {
		if i == 0 {
			b.WriteString(s.describe(t))
		} else {
			b.WriteString(" (" + s.describe(t) + ")")
		}
	}
	return b.String()
}

func (u *userState) flags() []string {
	f := []string{"off"}
	if u.on {
		f[0] = "on"
	}
	if u.nopass {
		f = append(f, "nopass")
	}
	switch u.sanitize {
	case sanitizeSkip:
		f = append(f, "skip-sanitize-payload")
	case sanitizeOn:
		f = append(f, "sanitize-payload")
	}
	return f
}

// SelectorInfo is one selector as ACL GETUSER shows it.
type SelectorInfo struct {
	Commands, Keys, Channels string
}

// Info is a user as ACL GETUSER shows it.
type Info struct {
	Flags     []string
	Passwords []string
	Root      SelectorInfo
	Selectors []SelectorInfo
}

// Info returns the user's description for ACL GETUSER.
func (u *User) Info() Info {
	st := u.state.Load()
	t := Commands()
	info := Info{Flags: st.flags(), Passwords: st.passwords}
	for i, s := range st.selectors {
		si := SelectorInfo{s.describeCommands(t), s.describeKeys(), s.describeChannels()}
		if i == 0 {
			info.Root = si
		} else {
			info.Selectors = append(info.Selectors, si)
		}
	}
	return info
}

// channelsOf returns every channel pattern of every selector, and whether one allows all.
func (u *userState) channelsOf() (all bool, pats []string) {
	for _, s := range u.selectors {
		if s.allChans {
			return true, nil
		}
		pats = append(pats, s.chans...)
	}
	return false, pats
}

// LosesChannels reports whether a subscriber of old's channels may be refused under the
// new permissions (Redis then closes the user's pub/sub connections that are).
func losesChannels(old, new *userState) bool {
	all, pats := new.channelsOf()
	if all {
		return false
	}
	for _, s := range old.selectors {
		if s.allChans {
			return true
		}
		for _, c := range s.chans {
			if !slices.Contains(pats, c) {
				return true
			}
		}
	}
	return false
}

// ChannelAllowed reports whether the user may still subscribe to ch (a pattern when
// isPattern): whether a pub/sub connection of the user keeps it after a change.
func (u *User) ChannelAllowed(ch []byte, isPattern bool) bool {
	all, pats := u.state.Load().channelsOf()
	return all || channelAllowed(pats, ch, isPattern)
}
