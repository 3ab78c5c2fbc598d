package cmdspec

import (
	"shardis/codec"
	"strings"
	"testing"
)

func argv(s string) [][]byte {
	var out [][]byte
	for _, f := range strings.Fields(s) {
		out = append(out, []byte(f))
	}
	return out
}

func keysString(keys []Key) string {
	var parts []string
	for _, k := range keys {
		parts = append(parts, string(k.Key)+"="+strings.Join(k.Flags.Names(), ","))
	}
	return strings.Join(parts, " ")
}

func TestKeys(t *testing.T) {
	numkeys := func(args [][]byte) [][]byte { // ZUNIONSTORE's keys
		n, _ := codec.ParseInt(args[2])
		out := [][]byte{args[1]}
		for i := 0; i < int(n) && 3+i < len(args); i++ {
			out = append(out, args[3+i])
		}
		return out
	}
	store := func(args [][]byte) [][]byte { // GEORADIUS key ... [STORE key]
		out := [][]byte{args[1]}
		for i := 6; i+1 < len(args); i++ {
			if strings.EqualFold(string(args[i]), "store") {
				out = append(out, args[i+1])
			}
		}
		return out
	}
	bitfield := func(argv [][]byte) KeyFlag {
		if len(argv) > 2 && strings.EqualFold(string(argv[2]), "get") {
			return RO | Access
		}
		return RW | Access | Update
	}
	cases := []struct {
		specs     []KeySpec
		keys      func([][]byte) [][]byte
		unlocated KeyFlag
		argv      string
		want      string
	}{
		{[]KeySpec{{Flags: RW | Access | Delete, Begin: Index(1), Find: Range(0, 1, 0)}, {Flags: OW | Update, Begin: Index(2), Find: Range(0, 1, 0)}},
			nil, RO, "rename a b", "a=RW,access,delete b=OW,update"},
		{[]KeySpec{{Flags: OW | Update, Begin: Index(1), Find: Range(-1, 2, 0)}}, nil, RO, "mset a 1 b 2", "a=OW,update b=OW,update"},
		{[]KeySpec{{Flags: OW | Update, Begin: Index(1), Find: Range(-1, 2, 0)}}, nil, RO, "mset a 1 b", "a=OW,update b=OW,update"},
		{[]KeySpec{{Flags: OW | Update, Begin: Index(1), Find: Range(0, 1, 0)}, {Flags: RO | Access, Begin: Index(2), Find: KeyNum(0, 1, 1)}},
			numkeys, RO, "zunionstore d 2 d x", "d=OW,update d=RO,access x=RO,access"},
		{[]KeySpec{{Flags: RO | Access, Begin: Index(1), Find: Range(0, 1, 0)}, {Flags: OW | Update, Begin: Keyword("STORE", 6), Find: Range(0, 1, 0)}},
			store, RO, "georadius k 1 2 3 m STORE d", "k=RO,access d=OW,update"},
		{[]KeySpec{{Flags: RO | Access, Begin: Index(1), Find: Range(0, 1, 0)}, {Flags: OW | Update}},
			store, RO, "georadius k 1 2 3 m STORE d", "k=RO,access d=OW,update"},
		{[]KeySpec{{Flags: RO | Access, Begin: Index(1), Find: Range(0, 1, 0)}}, store, RW | Access | Update,
			"georadius k 1 2 3 m STORE d", "k=RO,access d=RW,access,update"},
		{[]KeySpec{{Flags: RW | Access | Update | VariableFlags, Begin: Index(1), Find: Range(0, 1, 0), Variable: bitfield}},
			nil, RO, "bitfield a GET u8 0", "a=RO,access"},
		{[]KeySpec{{Flags: RW | Access | Update | VariableFlags, Begin: Index(1), Find: Range(0, 1, 0), Variable: bitfield}},
			nil, RO, "bitfield a SET u8 0 1", "a=RW,access,update"},
		{[]KeySpec{{Flags: RO | Access, Begin: Keyword("STREAMS", 1), Find: Range(-1, 1, 2)}}, nil, RO,
			"xread COUNT 2 STREAMS a b 0 0", "a=RO,access b=RO,access"},
		{[]KeySpec{{Flags: RO | Access, Begin: Keyword("STREAMS", 1), Find: Range(-1, 1, 2)}}, nil, RO, "xread COUNT 2", ""},
		// A spec that does not fit gives no keys.
		{[]KeySpec{{Flags: RO | Access, Begin: Index(1), Find: KeyNum(0, 1, 1)}}, nil, RO, "zdiff 3 a b", ""},
		{[]KeySpec{{Flags: RO | Access, Begin: Index(1), Find: KeyNum(0, 1, 1)}}, nil, RO, "zdiff +2 a b", ""},
	}
	for _, tc := range cases {
		if got := keysString(Keys(tc.specs, argv(tc.argv), tc.keys, tc.unlocated)); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.argv, got, tc.want)
		}
	}
}

func TestKeyFlagNames(t *testing.T) {
	if got := strings.Join((RW | Access | Delete | Incomplete).Names(), " "); got != "RW access delete incomplete" {
		t.Errorf("got %q", got)
	}
	if !(RM | Delete).Writes() || (RO | Access).Writes() {
		t.Error("Writes")
	}
	if HasKeys([]KeySpec{{Flags: NotKey}}) || !HasKeys([]KeySpec{{Flags: NotKey}, {Flags: RO}}) {
		t.Error("HasKeys")
	}
}

// The legacy key range is derived as Redis 7.0 derives it from the key specs.
func TestLegacyRange(t *testing.T) {
	for _, tc := range []struct {
		name              string
		specs             []KeySpec
		first, last, step int
	}{
		{"none (PING)", nil, 0, 0, 0},
		{"one key (GET)", []KeySpec{{Begin: Index(1), Find: Range(0, 1, 0)}}, 1, 1, 1},
		{"pairs (MSET)", []KeySpec{{Begin: Index(1), Find: Range(-1, 2, 0)}}, 1, -1, 2},
		{"all but the timeout (BLPOP)", []KeySpec{{Begin: Index(1), Find: Range(-2, 1, 0)}}, 1, -2, 1},
		{"two consecutive (RPOPLPUSH)", []KeySpec{{Begin: Index(1), Find: Range(0, 1, 0)}, {Begin: Index(2), Find: Range(0, 1, 0)}}, 1, 2, 1},
		{"a keynum spec is left out (ZUNIONSTORE)", []KeySpec{{Begin: Index(1), Find: Range(0, 1, 0)}, {Begin: Index(2), Find: KeyNum(0, 1, 1)}}, 1, 1, 1},
		{"keynum only (EVAL)", []KeySpec{{Begin: Index(2), Find: KeyNum(0, 1, 1)}}, 0, 0, 0},
		{"keyword only (MIGRATE's KEYS)", []KeySpec{{Begin: Keyword("KEYS", -2), Find: Range(-1, 1, 0)}}, 0, 0, 0},
	} {
		if f, l, s := LegacyRange(tc.specs); f != tc.first || l != tc.last || s != tc.step {
			t.Errorf("%s: %d %d %d, want %d %d %d", tc.name, f, l, s, tc.first, tc.last, tc.step)
		}
	}
}
