package acl

import (
	"slices"
	"strings"

	"shardis/internal/glob"
)

// Perm is the access a key pattern grants (%R~, %W~; ~ grants both).
type Perm uint8

// Key permissions.
const (
	PermRead Perm = 1 << iota
	PermWrite
	PermAll = PermRead | PermWrite
)

type keyPattern struct {
	pattern string
	raw     []byte // pattern's bytes, for matching without a conversion per key
	perm    Perm
}

// selector is one set of permissions: the root one of a user, or one in parentheses. A
// selector is never changed once a user holds it (a change copies it first).
type selector struct {
	// allCommands skips the command check; any command removed clears it.
	allCommands bool
	// future says the bitmap started from +@all (Redis's reserved bit): ACL LIST then
	// describes it as +@all minus what was taken away.
	future    bool
	bits      []uint64         // allowed command IDs
	firstArgs map[int][]string // allowed first arguments of an otherwise denied command
	allKeys   bool
	keys      []keyPattern
	allChans  bool
	chans     []string
}

func newSelector(t *Table) *selector {
	return &selector{bits: make([]uint64, (t.Len()+63)/64)}
}

func (s *selector) clone() *selector {
	c := *s
	c.bits = slices.Clone(s.bits)
	if s.firstArgs != nil {
		c.firstArgs = make(map[int][]string, len(s.firstArgs))
		for id, a := range s.firstArgs {
			c.firstArgs[id] = slices.Clone(a)
		}
	}
	c.keys = slices.Clone(s.keys)
	c.chans = slices.Clone(s.chans)
	return &c
}

func (s *selector) bit(id int) bool { return s.bits[id/64]&(1<<(id%64)) != 0 }

func (s *selector) setBit(id int, on bool) {
	if on {
		s.bits[id/64] |= 1 << (id % 64)
	} else {
		s.bits[id/64] &^= 1 << (id % 64)
		s.allCommands = false
	}
}

// change allows or denies cmd (and every subcommand of it), dropping its first arguments.
func (s *selector) change(cmd *Command, allow bool) {
	s.setBit(cmd.ID, allow)
	delete(s.firstArgs, cmd.ID)
	for _, sub := range cmd.Subs {
		s.setBit(sub.ID, allow)
	}
}

func (s *selector) setCategory(t *Table, bit uint64, allow bool) {
	t.walk(func(c *Command) {
		if c.Categories&bit != 0 {
			s.change(c, allow)
		}
	})
}

func (s *selector) setAll(on bool) {
	fill := uint64(0)
	if on {
		fill = ^uint64(0)
	}
	for i := range s.bits {
		s.bits[i] = fill
	}
	s.allCommands, s.future, s.firstArgs = on, on, nil
}

// Errors of rules, as Redis words them (ACL SETUSER puts them after the modifier).
const (
	errUnknownCommand = "Unknown command or category name in ACL"
	errRuleSyntax     = "Syntax error"
	errKeyAfterAll    = "Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not have any effect. Try 'resetkeys' to start with an empty list of patterns"
	errChanAfterAll   = "Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and does not have any effect. Try 'resetchannels' to start with an empty list of channels"
	errNoSuchPass     = "The password you are trying to remove from the user does not exist"
	errBadHash        = "The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters"
	errFirstArgOfSub  = "Allowing first-arg of a subcommand is not supported"
	errDuplicateUser  = "Duplicate user found. A user can only be defined once in config files"
)

// RuleError is a rule that could not be applied: Msg is Redis's reason.
type RuleError struct {
	Rule string
	Msg  string
}

func (e *RuleError) Error() string { return e.Msg }

// apply applies one selector rule and returns "" or Redis's reason for refusing it.
func (s *selector) apply(t *Table, op string) string {
	lower := strings.ToLower(op)
	switch {
	case lower == "allkeys" || op == "~*":
		s.allKeys, s.keys = true, nil
	case lower == "resetkeys":
		s.allKeys, s.keys = false, nil
	case lower == "allchannels" || op == "&*":
		s.allChans, s.chans = true, nil
	case lower == "resetchannels":
		s.allChans, s.chans = false, nil
	case lower == "allcommands" || lower == "+@all":
		s.setAll(true)
	case lower == "nocommands" || lower == "-@all":
		s.setAll(false)
	case op[0] == '~' || op[0] == '%':
		if s.allKeys {
			return errKeyAfterAll
		}
		perm, rest := PermAll, op[1:]
		if op[0] == '%' {
			perm = 0
			i, tilde := 1, false // the flags, up to '~'
			for ; i < len(op) && !tilde; i++ {
				switch c := op[i]; {
				case (c == 'R' || c == 'r') && perm&PermRead == 0:
					perm |= PermRead
				case (c == 'W' || c == 'w') && perm&PermWrite == 0:
					perm |= PermWrite
				case c == '~':
					tilde = true
				default:
					return errRuleSyntax
				}
			}
			if perm == 0 {
				return errRuleSyntax
			}
			rest = op[i:] // "%R" alone is the empty pattern, as Redis takes it
		}
		if hasSpace(rest) {
			return errRuleSyntax
		}
		for i := range s.keys {
			if s.keys[i].pattern == rest {
				s.keys[i].perm |= perm
				return ""
			}
		}
		s.keys = append(s.keys, keyPattern{rest, []byte(rest), perm})
	case op[0] == '&':
		if s.allChans {
			return errChanAfterAll
		}
		if hasSpace(op[1:]) {
			return errRuleSyntax
		}
		if !slices.Contains(s.chans, op[1:]) {
			s.chans = append(s.chans, op[1:])
		}
	case op[0] == '+' && !strings.HasPrefix(op, "+@"): // "+" alone names no command
		name := op[1:]
		cut := strings.LastIndexByte(name, '|')
		if cut < 0 {
			cmd := t.Lookup(name)
			if cmd == nil {
				return errUnknownCommand
			}
			s.change(cmd, true)
			return ""
		}
		cmd := t.Lookup(name[:cut])
		switch {
		case cmd == nil:
			return errUnknownCommand
		case cmd.Parent != nil:
			return errFirstArgOfSub
		case cut == len(name)-1:
			return errRuleSyntax
		}
		if len(cmd.Subs) > 0 {
			sub := t.Lookup(name)
			if sub == nil {
				return errUnknownCommand
			}
			s.change(sub, true)
			return ""
		}
		arg := name[cut+1:]
		if s.firstArgs == nil {
			s.firstArgs = make(map[int][]string)
		}
		for _, a := range s.firstArgs[cmd.ID] {
			if strings.EqualFold(a, arg) {
				return ""
			}
		}
		s.firstArgs[cmd.ID] = append(s.firstArgs[cmd.ID], arg)
	case op[0] == '-' && !strings.HasPrefix(op, "-@"):
		cmd := t.Lookup(op[1:])
		if cmd == nil {
			return errUnknownCommand
		}
		s.change(cmd, false)
	case strings.HasPrefix(op, "+@") || strings.HasPrefix(op, "-@"):
		bit := CategoryBit(op[2:])
		if bit == 0 {
			return errUnknownCommand
		}
		s.setCategory(t, bit, op[0] == '+')
	default:
		return errRuleSyntax
	}
	return ""
}

func hasSpace(s string) bool { return strings.ContainsAny(s, " \t\r\n\v\f\x00") }

// countCategory counts the commands of category bit that s allows (on) and denies (off).
func (s *selector) countCategory(t *Table, bit uint64) (on, off int) {
	t.walk(func(c *Command) {
		if c.Categories&bit != 0 {
			if s.bit(c.ID) {
				on++
			} else {
				off++
			}
		}
	})
	return on, off
}

// describeCommands returns the command rules that rebuild s's bitmap, as Redis 7.0 writes
// them: +@all or -@all, then the categories that fit best (chosen greedily, fewest
// differences first), then single commands and first arguments. Redis lists the single
// commands in the order of its command dictionary, which changes from run to run; here they
// come in name order.
func (s *selector) describeCommands(t *Table) string {
	var b strings.Builder
	fake := newSelector(t)
	additive := !s.future
	if additive {
		b.WriteString("-@all ")
	} else {
		b.WriteString("+@all ")
		fake.setAll(true)
	}
	temp := newSelector(t)
	copy(temp.bits, s.bits)
	applied := make([]bool, len(Categories))
	for {
		best, minDiff, maxSame := -1, int(^uint(0)>>1), 0
		for j := range Categories {
			if applied[j] {
				continue
			}
			on, off := temp.countCategory(t, 1<<j)
			diff, same := off, on
			if !additive {
				diff, same = on, off
			}
			if same > diff && (diff < minDiff || diff == minDiff && same > maxSame) {
				best, minDiff, maxSame = j, diff, same
			}
		}
		if best < 0 {
			break
		}
		fake.setCategory(t, 1<<best, additive)
		temp.setCategory(t, 1<<best, !additive)
		if additive {
			b.WriteString("+@")
		} else {
			b.WriteString("-@")
		}
		b.WriteString(Categories[best])
		b.WriteByte(' ')
		applied[best] = true
	}
	t.walk(func(c *Command) {
		user, have := s.bit(c.ID), fake.bit(c.ID)
		if user != have {
			if user {
				b.WriteByte('+')
			} else {
				b.WriteByte('-')
			}
			b.WriteString(c.Name)
			b.WriteByte(' ')
			fake.change(c, user)
		}
		if !user {
			for _, a := range s.firstArgs[c.ID] {
				b.WriteString("+" + c.Name + "|" + a + " ")
			}
		}
	})
	return strings.TrimSuffix(b.String(), " ")
}

// describeKeys returns the key patterns as rules ("~*", "%R~a*", "~b"), space separated.
func (s *selector) describeKeys() string {
	if s.allKeys {
		return "~*"
	}
	parts := make([]string, len(s.keys))
	for i, k := range s.keys {
		switch k.perm {
		case PermAll:
			parts[i] = "~" + k.pattern
		case PermRead:
			parts[i] = "%R~" + k.pattern
		default:
			parts[i] = "%W~" + k.pattern
		}
	}
	return strings.Join(parts, " ")
}

// describeChannels returns the channel patterns as rules ("&*", "&a &b").
func (s *selector) describeChannels() string {
	if s.allChans {
		return "&*"
	}
	parts := make([]string, len(s.chans))
	for i, c := range s.chans {
		parts[i] = "&" + c
	}
	return strings.Join(parts, " ")
}

// describe is the selector as ACL LIST writes it: keys, channels, commands.
func (s *selector) describe(t *Table) string {
	var b strings.Builder
	if k := s.describeKeys(); k != "" {
		b.WriteString(k)
		b.WriteByte(' ')
	}
	if s.allChans {
		b.WriteString("&* ")
	} else {
		b.WriteString("resetchannels ")
		if c := s.describeChannels(); c != "" {
			b.WriteString(c)
			b.WriteByte(' ')
		}
	}
	b.WriteString(s.describeCommands(t))
	return b.String()
}

// Reason says why a command is denied (Redis's ACL_DENIED_* values, whose order picks the
// error reported when every selector denies).
type Reason int

// Reasons.
const (
	Allowed Reason = iota
	DeniedCommand
	DeniedKey
	DeniedAuth
	DeniedChannel
)

// KeyRef is one key argument of a command: its position in the arguments and the access
// the command needs (from its key spec: access reads, insert/delete/update write).
type KeyRef struct {
	Pos  int
	Perm Perm
}

// ChannelRef is one channel argument: publish or subscribe (Pattern: a PSUBSCRIBE pattern,
// which must equal an ACL pattern literally).
type ChannelRef struct {
	Pos     int
	Pattern bool
}

// Request is a command to check.
type Request struct {
	Cmd      *Command
	Args     [][]byte // Args[0] is the command name
	HasKeys  bool     // the command takes keys (its key specs find some)
	Keys     []KeyRef
	Channels []ChannelRef
}

// check returns whether s permits r, and the position of the argument denied.
func (s *selector) check(r *Request) (Reason, int) {
	cmd := r.Cmd
	if !s.allCommands && !cmd.NoAuth && !s.bit(cmd.ID) {
		args := s.firstArgs[cmd.ID]
		idx := 1
		if cmd.Parent != nil {
			idx = 2
		}
		if len(args) == 0 || len(r.Args) < 2 || idx >= len(r.Args) ||
			!slices.ContainsFunc(args, func(a string) bool { return strings.EqualFold(a, string(r.Args[idx])) }) {
			return DeniedCommand, 0
		}
	}
	if !s.allKeys && r.HasKeys {
		for _, k := range r.Keys {
			if !s.keyAllowed(r.Args[k.Pos], k.Perm) {
				return DeniedKey, k.Pos
			}
		}
	}
	if !s.allChans {
		for _, c := range r.Channels {
			if !channelAllowed(s.chans, r.Args[c.Pos], c.Pattern) {
				return DeniedChannel, c.Pos
			}
		}
	}
	return Allowed, 0
}

// allKeysFor reports whether s grants need on every key: allkeys (~*), or a pattern that is
// exactly "*" with that access (%R~* for reads).
func (s *selector) allKeysFor(need Perm) bool {
	if s.allKeys {
		return true
	}
	for _, p := range s.keys {
		if p.perm&need == need && p.pattern == "*" {
			return true
		}
	}
	return false
}

func (s *selector) keyAllowed(key []byte, need Perm) bool {
	for _, p := range s.keys {
		if p.perm&need == need && glob.Match(p.raw, key, false) {
			return true
		}
	}
	return false
}

func channelAllowed(patterns []string, ch []byte, isPattern bool) bool {
	for _, p := range patterns {
		if isPattern && p == string(ch) || !isPattern && glob.Match([]byte(p), ch, false) {
			return true
		}
	}
	return false
}
