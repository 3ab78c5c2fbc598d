package pubsub

import "strconv"

// Class is a set of keyspace notification classes (notify-keyspace-events), with Redis
// 7.0's bits.
type Class uint32

// Keyspace notification classes.
const (
	Keyspace Class = 1 << iota // K: __keyspace@<db>__:<key> carries the event
	Keyevent                   // E: __keyevent@<db>__:<event> carries the key
	Generic                    // g: DEL, EXPIRE, RENAME, …
	String                     // $
	List                       // l
	Set                        // s
	Hash                       // h
	ZSet                       // z
	Expired                    // x
	Evicted                    // e
	Stream                     // t
	KeyMiss                    // m
	Module                     // d
	New                        // n
	// All is Redis's "A": every class but key-miss and new.
	All = Generic | String | List | Set | Hash | ZSet | Expired | Evicted | Stream | Module
)

// ParseClasses parses notify-keyspace-events; ok is false for a character Redis refuses.
func ParseClasses(s string) (c Class, ok bool) {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case 'A':
			c |= All
		case 'g':
			c |= Generic
		case '$':
			c |= String
		case 'l':
			c |= List
		case 's':
			c |= Set
		case 'h':
			c |= Hash
		case 'z':
			c |= ZSet
		case 'x':
			c |= Expired
		case 'e':
			c |= Evicted
		case 'K':
			c |= Keyspace
		case 'E':
			c |= Keyevent
		case 't':
			c |= Stream
		case 'm':
			c |= KeyMiss
		case 'd':
			c |= Module
		case 'n':
			c |= New
		default:
			return 0, false
		}
	}
	return c, true
}

// String formats c as CONFIG GET shows it (Redis's keyspaceEventsFlagsToString: "A" hides
// "n", as it does in Redis 7.0).
func (c Class) String() string {
	var b []byte
	if c&All == All {
		b = append(b, 'A')
	} else {
		for _, f := range []struct {
			bit Class
			ch  byte
		}{{Generic, 'g'}, {String, '$'}, {List, 'l'}, {Set, 's'}, {Hash, 'h'}, {ZSet, 'z'},
			{Expired, 'x'}, {Evicted, 'e'}, {Stream, 't'}, {Module, 'd'}, {New, 'n'}} {
			if c&f.bit != 0 {
				b = append(b, f.ch)
			}
		}
	}
	if c&Keyspace != 0 {
		b = append(b, 'K')
	}
	if c&Keyevent != 0 {
		b = append(b, 'E')
	}
	if c&KeyMiss != 0 {
		b = append(b, 'm')
	}
	return string(b)
}

// Notify publishes the keyspace notification event of class about key in logical db, as
// the classes enabled allow: on __keyspace@<db>__:<key> (K) and __keyevent@<db>__:<event>
// (E). The caller has checked that enabled has class. origin, when not nil, is the command
// that made the event: its own subscription gets the messages through it, at pos of its
// reply (see Origin).
func (r *Registry) Notify(origin Origin, pos int, enabled Class, event string, db int, key []byte) {
	if !r.Active() {
		return
	}
	var ch []byte
	if enabled&Keyspace != 0 {
		ch = append(ch, "__keyspace@"...)
		ch = strconv.AppendInt(ch, int64(db), 10)
		ch = append(ch, "__:"...)
		ch = append(ch, key...)
		r.publish(origin, pos, ch, []byte(event))
	}
	if enabled&Keyevent != 0 {
		ch = append(ch[:0], "__keyevent@"...)
		ch = strconv.AppendInt(ch, int64(db), 10)
		ch = append(ch, "__:"...)
		ch = append(ch, event...)
		r.publish(origin, pos, ch, key)
	}
}
