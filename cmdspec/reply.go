package cmdspec

import (
	"slices"

	"shardis/codec"
)

// Desc is a command as COMMAND INFO and COMMAND DOCS describe it.
type Desc struct {
	Name                    string // full name: "get", "config|get"
	Arity                   int
	Flags                   []string // COMMAND INFO's flags (see InfoFlags)
	FirstKey, LastKey, Step int
	ACL                     []string // categories without '@'
	Tips                    []string
	KeySpecs                []KeySpec

	Summary, Since, Group, Complexity string
	DocFlags                          []string
	DeprecatedSince, ReplacedBy       string
	Args                              []*Arg // COMMAND DOCS arguments (ParseSyntax); nil when none

	Subs []*Desc // subcommands, in the order they are listed
}

// InfoFlags are the flags COMMAND INFO shows for a command declaring flags: those but
// may_replicate (Redis 7.0 keeps it for CLIENT PAUSE WRITE and does not show it), plus
// movablekeys when a function finds its keys (movable; Redis derives it the same way).
func InfoFlags(flags []string, movable bool) []string {
	if slices.Contains(flags, "may_replicate") {
		flags = slices.DeleteFunc(slices.Clone(flags), func(f string) bool { return f == "may_replicate" })
	}
	if !movable {
		return flags
	}
	for _, f := range flags {
		if f == "movablekeys" {
			return flags
		}
	}
	out := make([]string, 0, len(flags)+1)
	for _, f := range flags {
		if f == "allow_busy" { // the only flag Redis lists after movablekeys
			out = append(out, "movablekeys")
		}
		out = append(out, f)
	}
	if len(out) == len(flags) {
		out = append(out, "movablekeys")
	}
	return out
}

// WriteInfo writes Redis 7.0's ten-element COMMAND INFO entry for d.
func WriteInfo(w *codec.Writer, d *Desc) {
	w.ArrayLen(10)
	w.BulkString(d.Name)
	w.Int(int64(d.Arity))
	w.SetLen(len(d.Flags))
	for _, f := range d.Flags {
		w.Simple(f)
	}
	w.Int(int64(d.FirstKey))
	w.Int(int64(d.LastKey))
	w.Int(int64(d.Step))
	w.SetLen(len(d.ACL))
	for _, a := range d.ACL {
		w.Simple("@" + a)
	}
	w.SetLen(len(d.Tips))
	for _, t := range d.Tips {
		w.BulkString(t)
	}
	w.SetLen(len(d.KeySpecs))
	for i := range d.KeySpecs {
		writeKeySpec(w, &d.KeySpecs[i])
	}
	if len(d.Subs) == 0 {
		w.SetLen(0)
		return
	}
	w.ArrayLen(len(d.Subs))
	for _, sub := range d.Subs {
		WriteInfo(w, sub)
	}
}

func writeKeySpec(w *codec.Writer, s *KeySpec) {
	if s.Notes != "" {
		w.MapLen(4)
		w.BulkString("notes")
		w.BulkString(s.Notes)
	} else {
		w.MapLen(3)
	}
	w.BulkString("flags")
	flags := s.Flags.Names()
	w.SetLen(len(flags))
	for _, f := range flags {
		w.Simple(f)
	}
	w.BulkString("begin_search")
	w.MapLen(2)
	w.BulkString("type")
	b := &s.Begin
	switch b.Type {
	case BeginIndex:
		w.BulkString("index")
		w.BulkString("spec")
		w.MapLen(1)
		w.BulkString("index")
		w.Int(int64(b.Index))
	case BeginKeyword:
		w.BulkString("keyword")
		w.BulkString("spec")
		w.MapLen(2)
		w.BulkString("keyword")
		w.BulkString(b.Keyword)
		w.BulkString("startfrom")
		w.Int(int64(b.StartFrom))
	default:
		w.BulkString("unknown")
		w.BulkString("spec")
		w.MapLen(0)
	}
	w.BulkString("find_keys")
	w.MapLen(2)
	w.BulkString("type")
	f := &s.Find
	switch f.Type {
	case FindRange:
		w.BulkString("range")
		w.BulkString("spec")
		w.MapLen(3)
		w.BulkString("lastkey")
		w.Int(int64(f.LastKey))
		w.BulkString("keystep")
		w.Int(int64(f.KeyStep))
		w.BulkString("limit")
		w.Int(int64(f.Limit))
	case FindKeyNum:
		w.BulkString("keynum")
		w.BulkString("spec")
		w.MapLen(3)
		w.BulkString("keynumidx")
		w.Int(int64(f.KeyNumIdx))
		w.BulkString("firstkey")
		w.Int(int64(f.FirstKey))
		w.BulkString("keystep")
		w.Int(int64(f.KeyStep))
	default:
		w.BulkString("unknown")
		w.BulkString("spec")
		w.MapLen(0)
	}
}

// WriteDocs writes d's COMMAND DOCS map, fields in Redis 7.0's order.
func WriteDocs(w *codec.Writer, d *Desc) {
	n := 1 // group
	for _, present := range []bool{d.Summary != "", d.Since != "", d.Complexity != "", len(d.DocFlags) > 0,
		d.DeprecatedSince != "", d.ReplacedBy != "", len(d.Args) > 0, len(d.Subs) > 0} {
		if present {
			n++
		}
	}
	w.MapLen(n)
	if d.Summary != "" {
		w.BulkString("summary")
		w.BulkString(d.Summary)
	}
	if d.Since != "" {
		w.BulkString("since")
		w.BulkString(d.Since)
	}
	w.BulkString("group")
	w.BulkString(d.Group)
	if d.Complexity != "" {
		w.BulkString("complexity")
		w.BulkString(d.Complexity)
	}
	if len(d.DocFlags) > 0 {
		w.BulkString("doc_flags")
		w.SetLen(len(d.DocFlags))
		for _, f := range d.DocFlags {
			w.Simple(f)
		}
	}
	if d.DeprecatedSince != "" {
		w.BulkString("deprecated_since")
		w.BulkString(d.DeprecatedSince)
	}
	if d.ReplacedBy != "" {
		w.BulkString("replaced_by")
		w.BulkString(d.ReplacedBy)
	}
	if len(d.Args) > 0 {
		w.BulkString("arguments")
		writeDocArgs(w, d.Args)
	}
	if len(d.Subs) > 0 {
		w.BulkString("subcommands")
		w.MapLen(len(d.Subs))
		for _, sub := range d.Subs {
			w.BulkString(sub.Name)
			WriteDocs(w, sub)
		}
	}
}

func writeDocArgs(w *codec.Writer, args []*Arg) {
	w.ArrayLen(len(args))
	for _, a := range args {
		var flags []string
		if a.Optional {
			flags = append(flags, "optional")
		}
		if a.Multiple {
			flags = append(flags, "multiple")
		}
		if a.MultipleToken {
			flags = append(flags, "multiple_token")
		}
		n := 2
		for _, present := range []bool{a.KeySpec >= 0, a.HasToken, len(flags) > 0, len(a.Args) > 0} {
			if present {
				n++
			}
		}
		w.MapLen(n)
		w.BulkString("name")
		w.BulkString(a.Name)
		w.BulkString("type")
		w.BulkString(a.Type)
		if a.KeySpec >= 0 {
			w.BulkString("key_spec_index")
			w.Int(int64(a.KeySpec))
		}
		if a.HasToken {
			w.BulkString("token")
			w.BulkString(a.Token)
		}
		if len(flags) > 0 {
			w.BulkString("flags")
			w.SetLen(len(flags))
			for _, f := range flags {
				w.Simple(f)
			}
		}
		if len(a.Args) > 0 {
			w.BulkString("arguments")
			writeDocArgs(w, a.Args)
		}
	}
}
