// Package cmdspec describes commands as Redis 7.0's COMMAND shows them, from a plain
// description a command declares once (its cmds.Command literal): key specs and their
// evaluation (which arguments are keys, with which access: COMMAND GETKEYS, GETKEYSANDFLAGS
// and the ACL key check), the argument tree parsed from a synopsis (COMMAND DOCS), and the
// COMMAND INFO and COMMAND DOCS replies. It knows nothing of the command table: package cmds
// hands it descriptions.
package cmdspec

import (
	"bytes"
	"shardis/codec"
)

// KeyFlag is a key spec's flags, Redis's CMD_KEY_* bits.
type KeyFlag uint16

// Redis 7.0's key spec flags, in the order COMMAND INFO lists them.
const (
	RO            KeyFlag = 1 << iota // read only
	RW                                // read and written
	OW                                // overwritten without being read
	RM                                // deleted
	Access                            // the value is returned, copied or used
	Update                            // the value is updated
	Insert                            // data is added, none removed
	Delete                            // data is removed
	NotKey                            // not a key (a shard channel)
	Incomplete                        // the spec may not find every key
	VariableFlags                     // the flags depend on the arguments (KeySpec.Variable)
)

var keyFlagNames = [...]string{"RO", "RW", "OW", "RM", "access", "update", "insert", "delete", "not_key",
	"incomplete", "variable_flags"}

// Names returns the names of the bits of f in COMMAND INFO's order.
func (f KeyFlag) Names() []string {
	var out []string
	for i, n := range keyFlagNames {
		if f&(1<<i) != 0 {
			out = append(out, n)
		}
	}
	return out
}

// Writes reports whether f says the key is written (OW, RW or RM).
func (f KeyFlag) Writes() bool { return f&(OW|RW|RM) != 0 }

// BeginType is how a key spec finds its first key.
type BeginType uint8

// Begin search types.
const (
	BeginUnknown BeginType = iota
	BeginIndex             // at a fixed argument index
	BeginKeyword           // after a keyword
)

// BeginSearch is a key spec's begin_search.
type BeginSearch struct {
	Type      BeginType
	Index     int    // BeginIndex
	Keyword   string // BeginKeyword: the keyword, searched from StartFrom (from the end when negative)
	StartFrom int
}

// FindType is how a key spec finds its keys from the first one.
type FindType uint8

// Find keys types.
const (
	FindUnknown FindType = iota
	FindRange            // a range of arguments
	FindKeyNum           // a count argument, then the keys
)

// FindKeys is a key spec's find_keys.
type FindKeys struct {
	Type FindType
	// FindRange: LastKey relative to the first key (negative: from the end), KeyStep, and
	// Limit (when LastKey is -1: a fraction of the remaining arguments).
	LastKey, KeyStep, Limit int
	// FindKeyNum: the count's index relative to the first key, the first key's index
	// relative to it, and KeyStep.
	KeyNumIdx, FirstKey int
}

// Index is Redis's KSPEC_BS_INDEX: the first key is argument i.
func Index(i int) BeginSearch { return BeginSearch{Type: BeginIndex, Index: i} }

// Keyword is Redis's KSPEC_BS_KEYWORD: the first key follows keyword, searched from
// startFrom (backwards from the end when negative).
func Keyword(keyword string, startFrom int) BeginSearch {
	return BeginSearch{Type: BeginKeyword, Keyword: keyword, StartFrom: startFrom}
}

// Range is Redis's KSPEC_FK_RANGE.
func Range(lastKey, keyStep, limit int) FindKeys {
	return FindKeys{Type: FindRange, LastKey: lastKey, KeyStep: keyStep, Limit: limit}
}

// KeyNum is Redis's KSPEC_FK_KEYNUM.
func KeyNum(keyNumIdx, firstKey, keyStep int) FindKeys {
	return FindKeys{Type: FindKeyNum, KeyNumIdx: keyNumIdx, FirstKey: firstKey, KeyStep: keyStep}
}

// KeySpec is one key spec of COMMAND INFO: where a command's keys start (Begin), how many
// follow (Find), and how they are accessed (Flags).
type KeySpec struct {
	Flags KeyFlag
	Notes string
	Begin BeginSearch
	Find  FindKeys
	// Variable gives the flags of the keys for the arguments argv when Flags has
	// VariableFlags (SET reads its key only with GET).
	Variable func(argv [][]byte) KeyFlag
}

// Positions returns the indexes of the arguments s finds in argv (argv[0] is the command
// name), as Redis's key spec walk does; ok is false when argv does not fit the spec (a
// keyword spec whose keyword is absent finds nothing but fits).
func (s *KeySpec) Positions(argv [][]byte) (pos []int, ok bool) {
	argc := len(argv)
	first := 0
	switch s.Begin.Type {
	case BeginIndex:
		first = s.Begin.Index
	case BeginKeyword:
		if s.Begin.StartFrom >= 0 {
			for i := s.Begin.StartFrom; i < argc-1; i++ {
				if equalFold(argv[i], s.Begin.Keyword) {
					first = i + 1
					break
				}
			}
		} else {
			for i := argc + s.Begin.StartFrom; i > 0 && i < argc; i-- {
				if equalFold(argv[i], s.Begin.Keyword) {
					first = i + 1
					break
				}
			}
		}
		if first == 0 {
			return nil, true
		}
	default:
		return nil, false
	}
	var last, step int
	f := &s.Find
	switch f.Type {
	case FindRange:
		step = f.KeyStep
		switch {
		case f.LastKey >= 0:
			last = first + f.LastKey
		case f.Limit == 0:
			last = argc + f.LastKey
		default:
			last = first + (argc-first)/f.Limit + f.LastKey
		}
	case FindKeyNum:
		step = f.KeyStep
		if f.KeyNumIdx >= argc-first {
			return nil, false
		}
		n, isInt := codec.ParseInt(argv[first+f.KeyNumIdx])
		if !isInt || n < 0 || n > int64(argc) {
			return nil, false
		}
		first += f.FirstKey
		last = first + int(n) - 1
	default:
		return nil, false
	}
	if last >= argc || last < first || first >= argc || step <= 0 {
		return nil, false
	}
	for i := first; i <= last; i += step {
		pos = append(pos, i)
	}
	return pos, true
}

// flagsFor returns the flags of the keys s finds in argv.
func (s *KeySpec) flagsFor(argv [][]byte) KeyFlag {
	if s.Flags&VariableFlags != 0 && s.Variable != nil {
		return s.Variable(argv)
	}
	return s.Flags
}

// HasKeys reports whether specs find real keys (not shard channels): Redis's
// doesCommandHaveKeys for a command without a key-finding function.
func HasKeys(specs []KeySpec) bool {
	for i := range specs {
		if specs[i].Flags&NotKey == 0 {
			return true
		}
	}
	return false
}

// Key is a key argument and the flags of the key spec that finds it.
type Key struct {
	Key   []byte
	Flags KeyFlag
}

// Keys returns the keys of argv (argv[0] is the command name) with their flags. keys, when
// not nil, is the command's own key finder (the keys routing uses): each of its keys takes
// the flags of the spec that finds the same argument, and a key no spec locates the flags of
// the spec Redis declares for such keys (an unknown-search spec that writes, SORT's STORE) or
// else unlocated. Without keys, the keys are those the specs find, none when one does not
// fit argv.
func Keys(specs []KeySpec, argv [][]byte, keys func([][]byte) [][]byte, unlocated KeyFlag) []Key {
	type hit struct {
		pos   int
		flags KeyFlag
	}
	var hits []hit
	for i := range specs {
		pos, ok := specs[i].Positions(argv)
		if !ok && keys == nil {
			return nil // Redis gives no keys when a spec does not fit
		}
		flags := specs[i].flagsFor(argv)
		for _, p := range pos {
			hits = append(hits, hit{p, flags})
		}
	}
	if keys == nil {
		out := make([]Key, len(hits))
		for i, h := range hits {
			out[i] = Key{argv[h.pos], h.flags}
		}
		return out
	}
	found := keys(argv)
	out := make([]Key, len(found))
	used := make([]bool, len(hits))
	for i := range specs {
		if specs[i].Begin.Type == BeginUnknown && specs[i].Flags.Writes() {
			unlocated = specs[i].Flags
			break
		}
	}
	// Keys come in the order of the hits: each search starts after the last hit taken, so
	// a command with many keys costs linear time (ACL checks every command of a restricted
	// user with this).
	next := 0
	for i, k := range found {
		out[i] = Key{k, unlocated}
		for step := range len(hits) {
			j := (next + step) % len(hits)
			if !used[j] && SameArg(argv[hits[j].pos], k) {
				out[i].Flags, used[j] = hits[j].flags, true
				next = j + 1
				break
			}
		}
	}
	return out
}

// SameArg reports whether key k is argument a: the same bytes in memory, or else the same
// text.
func SameArg(a, k []byte) bool {
	if len(a) > 0 && len(a) == len(k) && &a[0] == &k[0] {
		return true
	}
	return string(a) == string(k)
}

func equalFold(b []byte, s string) bool { return bytes.EqualFold(b, []byte(s)) }

// LegacyRange returns the first key, last key and step COMMAND INFO shows for specs, derived
// as Redis 7.0's populateCommandLegacyRangeSpec derives them: one index+range spec is the
// range itself; otherwise the consecutive index+range specs with step 1 are merged, and the
// others (keyword or keynum specs, other steps) left out. 0, 0, 0 when none qualifies.
func LegacyRange(specs []KeySpec) (first, last, step int) {
	if len(specs) == 1 && specs[0].Begin.Type == BeginIndex && specs[0].Find.Type == FindRange {
		s := specs[0]
		last = s.Find.LastKey
		if last >= 0 {
			last += s.Begin.Index
		}
		return s.Begin.Index, last, s.Find.KeyStep
	}
	first = -1
	prevLast := 0
	var lastU uint
	for _, s := range specs {
		if s.Begin.Type != BeginIndex || s.Find.Type != FindRange {
			continue
		}
		if s.Find.KeyStep != 1 || prevLast != 0 && prevLast != s.Begin.Index-1 {
			continue
		}
		if first < 0 || s.Begin.Index < first {
			first = s.Begin.Index
		}
		abs := s.Find.LastKey
		if abs >= 0 {
			abs += s.Begin.Index
		}
		lastU = max(lastU, uint(abs)) // unsigned, as Redis: a negative (from the end) wins
		prevLast = int(lastU)
	}
	if first < 0 {
		return 0, 0, 0
	}
	return first, int(lastU), 1
}
