package cmdspec

import (
	"fmt"
	"strings"
	"testing"
)

// syntaxDocTree renders an argument tree compactly for comparisons:
// name:type[=TOKEN][?][+][++][#spec](children).
func syntaxDocTree(args []*Arg) string {
	parts := make([]string, len(args))
	for i, a := range args {
		s := a.Name + ":" + a.Type
		if a.HasToken {
			s += "=" + a.Token
		}
		if a.Optional {
			s += "?"
		}
		if a.Multiple {
			s += "+"
		}
		if a.MultipleToken {
			s += "+"
		}
		if a.KeySpec >= 0 {
			s += fmt.Sprintf("#%d", a.KeySpec)
		}
		if a.Args != nil {
			s += "(" + syntaxDocTree(a.Args) + ")"
		}
		parts[i] = s
	}
	return strings.Join(parts, " ")
}

// The trees below are Redis 7.0's COMMAND DOCS argument trees for these synopses.
func TestSyntax_ParseMatchesRedisDocs(t *testing.T) {
	cases := []struct {
		cmd, syntax string
		nspecs      int
		want        string
	}{
		{"get", "key", 1, "key:key#0"},
		{"set", "key value [NX | XX] [GET] [EX seconds | PX milliseconds | EXAT unix-time-seconds | PXAT unix-time-milliseconds | KEEPTTL]", 1,
			"key:key#0 value:string condition:oneof?(nx:pure-token=NX xx:pure-token=XX) get:pure-token=GET? " +
				"expiration:oneof?(seconds:integer=EX milliseconds:integer=PX unix-time-seconds:unix-time=EXAT " +
				"unix-time-milliseconds:unix-time=PXAT keepttl:pure-token=KEEPTTL)"},
		{"scan", "cursor [MATCH pattern] [COUNT count] [TYPE type]", 0,
			"cursor:integer pattern:pattern=MATCH? count:integer=COUNT? type:string=TYPE?"},
		{"expire", "key seconds [NX | XX | GT | LT]", 1,
			"key:key#0 seconds:integer condition:oneof?(nx:pure-token=NX xx:pure-token=XX gt:pure-token=GT lt:pure-token=LT)"},
		{"config|set", "parameter value [parameter value ...]", 0,
			"parameter_value:block+(parameter:string value:string)"},
		{"config|get", "parameter [parameter ...]", 0, "parameter:block+(parameter:string)"},
		{"mset", "key value [key value ...]", 1, "key_value:block+(key:key#0 value:string)"},
		{"del", "key [key ...]", 1, "key:key+#0"},
		{"rename", "key newkey", 2, "key:key#0 newkey:key#1"},
		{"copy", "source destination [DB destination-db] [REPLACE]", 2,
			"source:key#0 destination:key#1 destination-db:integer=DB? replace:pure-token=REPLACE?"},
		{"flushall", "[ASYNC | SYNC]", 0, "async:oneof?(async:pure-token=ASYNC sync:pure-token=SYNC)"},
		{"command|info", "[command-name [command-name ...]]", 0, "command-name:string?+"},
		{"command|list", "[FILTERBY <MODULE module-name | ACLCAT category | PATTERN pattern>]", 0,
			"filterby:oneof=FILTERBY?(module-name:string=MODULE category:string=ACLCAT pattern:pattern=PATTERN)"},
		{"client|list", "[TYPE <NORMAL | MASTER | REPLICA | PUBSUB>] [ID client-id [client-id ...]]", 0,
			"normal_master_replica_pubsub:oneof=TYPE?(normal:pure-token=NORMAL master:pure-token=MASTER " +
				"replica:pure-token=REPLICA pubsub:pure-token=PUBSUB) id:block=ID?(client-id:integer+)"},
		// A repeated oneof as Redis's docs print it, and as "<a | b> [<a | b> ...]".
		{"client|kill", "<ip:port | <[ID client-id] | [TYPE <NORMAL | MASTER | SLAVE | REPLICA | PUBSUB>] | [USER username] | " +
			"[ADDR ip:port] | [LADDR ip:port] | [SKIPME yes/no] [[ID client-id] | [TYPE <NORMAL | MASTER | SLAVE | REPLICA | PUBSUB>] | " +
			"[USER username] | [ADDR ip:port] | [LADDR ip:port] | [SKIPME yes/no] ...]>>", 0, syntaxClientKillTree},
		{"client|kill", "<ip:port | <<[ID client-id] | [TYPE <NORMAL | MASTER | SLAVE | REPLICA | PUBSUB>] | [USER username] | " +
			"[ADDR ip:port] | [LADDR ip:port] | [SKIPME yes/no]> [<[ID client-id] | [TYPE <NORMAL | MASTER | SLAVE | REPLICA | PUBSUB>] | " +
			"[USER username] | [ADDR ip:port] | [LADDR ip:port] | [SKIPME yes/no]> ...]>>", 0, syntaxClientKillTree},
		{"sort", "key [BY pattern] [LIMIT offset count] [GET pattern [GET pattern ...]] [ASC | DESC] [ALPHA] [STORE destination]", 0,
			"key:key pattern:pattern=BY? offset_count:block=LIMIT?(offset:integer count:integer) " +
				"pattern:pattern=GET?++ order:oneof?(asc:pure-token=ASC desc:pure-token=DESC) sorting:pure-token=ALPHA? " +
				"destination:key=STORE?"},
		{"migrate", `host port <key | ""> destination-db timeout [COPY] [REPLACE] [[AUTH password] | [AUTH2 username password]] [KEYS key [key ...]]`, 2,
			"host:string port:integer key_or_empty_string:oneof(key:key#0 empty_string:pure-token=) destination-db:integer " +
				"timeout:integer copy:pure-token=COPY? replace:pure-token=REPLACE? authentication:oneof?(password:string=AUTH? " +
				"username_password:block=AUTH2?(username:string password:string)) key:key=KEYS?+#1"},
		{"xread", "[COUNT count] [BLOCK milliseconds] STREAMS key [key ...] id [id ...]", 1,
			"count:integer=COUNT? milliseconds:integer=BLOCK? streams:block=STREAMS(key:key+#0 id:string+)"},
		{"xinfo|stream", "key [FULL [COUNT count]]", 1, "key:key#0 full:block=FULL?(count:integer=COUNT?)"},
		{"failover", "[TO host port [FORCE]] [ABORT] [TIMEOUT milliseconds]", 0,
			"target:block=TO?(host:string port:integer force:pure-token=FORCE?) abort:pure-token=ABORT? milliseconds:integer=TIMEOUT?"},
		{"replicaof", "<host port | NO ONE>", 0,
			"args:oneof(host-port:block(host:string port:integer) no-one:block(no:pure-token=NO one:pure-token=ONE))"},
		{"lmove", "source destination <LEFT | RIGHT> <LEFT | RIGHT>", 2,
			"source:key#0 destination:key#1 wherefrom:oneof(left:pure-token=LEFT right:pure-token=RIGHT) " +
				"whereto:oneof(left:pure-token=LEFT right:pure-token=RIGHT)"},
		{"incrbyfloat", "key increment", 1, "key:key#0 increment:double"},
		{"incrby", "key increment", 1, "key:key#0 increment:integer"},
		{"bitfield", "key [GET encoding offset | [OVERFLOW <WRAP | SAT | FAIL>] <SET encoding offset value | INCRBY encoding offset increment> " +
			"[GET encoding offset | [OVERFLOW <WRAP | SAT | FAIL>] <SET encoding offset value | INCRBY encoding offset increment> ...]]", 1,
			"key:key#0 operation:oneof?+(encoding_offset:block=GET(encoding:string offset:integer) " +
				"write:block(wrap_sat_fail:oneof=OVERFLOW?(wrap:pure-token=WRAP sat:pure-token=SAT fail:pure-token=FAIL) " +
				"write_operation:oneof(encoding_offset_value:block=SET(encoding:string offset:integer value:integer) " +
				"encoding_offset_increment:block=INCRBY(encoding:string offset:integer increment:integer))))"},
		// Compact spellings Redis's docs do not use still parse.
		{"getex", "key [EX seconds|PX milliseconds|PERSIST]", 1,
			"key:key#0 seconds_milliseconds_persist:oneof?(seconds:integer=EX milliseconds:integer=PX persist:pure-token=PERSIST)"},
		{"ping", "", 0, ""},
		// BYBOX is width's token, not the block's (BYRADIUS is radius's by the usual rule).
		{"geosearch", "key <FROMMEMBER member | FROMLONLAT longitude latitude> <BYRADIUS radius <M | KM | FT | MI> | BYBOX width height <M | KM | FT | MI>>", 1,
			"key:key#0 from:oneof(member:string=FROMMEMBER longitude_latitude:block=FROMLONLAT(longitude:double latitude:double)) " +
				"by:oneof(circle:block(radius:double=BYRADIUS unit:oneof(m:pure-token=M km:pure-token=KM ft:pure-token=FT mi:pure-token=MI)) " +
				"box:block(width:double=BYBOX height:double unit:oneof(m:pure-token=M km:pure-token=KM ft:pure-token=FT mi:pure-token=MI)))"},
	}
	for _, tc := range cases {
		args, err := ParseSyntax(tc.cmd, tc.syntax)
		if err != nil {
			t.Errorf("%s %q: %v", tc.cmd, tc.syntax, err)
			continue
		}
		NumberKeyArgs(args, tc.nspecs)
		if got := syntaxDocTree(args); got != tc.want {
			t.Errorf("%s %q:\n got  %s\n want %s", tc.cmd, tc.syntax, got, tc.want)
		}
	}
}

const syntaxClientKillTree = "filter:oneof(ip:port:string new-format:oneof+(client-id:integer=ID? " +
	"normal_master_slave_pubsub:oneof=TYPE?(normal:pure-token=NORMAL master:pure-token=MASTER slave:pure-token=SLAVE " +
	"replica:pure-token=REPLICA pubsub:pure-token=PUBSUB) username:string=USER? ip:port:string=ADDR? " +
	"ip:port:string=LADDR? yes/no:string=SKIPME?))"

func TestSyntax_RejectsMalformed(t *testing.T) {
	for _, s := range []string{
		"[key", "key]", "<a | b", "a | b", "[]", "key ...", "[a ... b]", "<a>>", "[a | ]", "[key [key ...]",
	} {
		if args, err := ParseSyntax("x", s); err == nil {
			t.Errorf("%q parsed as %s, want an error", s, syntaxDocTree(args))
		}
	}
}

func TestSyntax_ArgCount(t *testing.T) {
	cases := []struct {
		syntax   string
		min, max int
	}{
		{"", 0, 0},
		{"key", 1, 1},
		{"[message]", 0, 1},
		{"key [key ...]", 1, -1},
		{"key value [NX | XX] [GET] [EX seconds | PX milliseconds | KEEPTTL]", 2, 6},
		{"key value [key value ...]", 2, -1},
		{"<ip:port | <[ID client-id] | [USER username] [[ID client-id] | [USER username] ...]>>", 0, -1},
		{"[FILTERBY <MODULE module-name | ACLCAT category | PATTERN pattern>]", 0, 3},
		{"source destination <LEFT | RIGHT> <LEFT | RIGHT>", 4, 4},
		{"[TO host port [FORCE]] [ABORT] [TIMEOUT milliseconds]", 0, 7},
	}
	for _, tc := range cases {
		args, err := ParseSyntax("x", tc.syntax)
		if err != nil {
			t.Fatalf("%q: %v", tc.syntax, err)
		}
		if lo, hi := ArgCount(args); lo != tc.min || hi != tc.max {
			t.Errorf("%q: got %d..%d, want %d..%d", tc.syntax, lo, hi, tc.min, tc.max)
		}
	}
}

func TestInfoFlags_Movablekeys(t *testing.T) {
	cases := []struct {
		flags   []string
		movable bool
		want    string
	}{
		{[]string{"write", "denyoom"}, false, "write denyoom"},
		{[]string{"write", "denyoom"}, true, "write denyoom movablekeys"},
		{[]string{"noscript", "loading", "stale", "fast", "allow_busy"}, true, "noscript loading stale fast movablekeys allow_busy"},
		{[]string{"readonly", "movablekeys"}, true, "readonly movablekeys"},
	}
	for _, tc := range cases {
		if got := strings.Join(InfoFlags(tc.flags, tc.movable), " "); got != tc.want {
			t.Errorf("got %q, want %q", got, tc.want)
		}
	}
}
