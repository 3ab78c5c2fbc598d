package shard

// migratable reports whether a data directory of format from can be brought to
// codec.FormatVersion by rewriting its manifest alone.
//
// Format 2 -> 3: binlog records gained units, marked by the top bit of the record's time
// field, which a format-2 writer never set (unix milliseconds do not reach it). Every format-2
// record is therefore a valid format-3 record that stands alone, and nothing else changed.
// Once migrated, a format-2 build refuses the directory: it would misread unit records.
//
// Format 3 -> 4: streams (meta type 5) and fragmented strings (meta flag 0x40) are new kinds
// of value; a format-3 directory holds none, so it is format 4 as it is. The rewritten manifest
// stops a format-3 build from opening a directory that may hold them.
//
// Format 4 -> 5: a unit may span one shard (the records of an EXEC or a script in one shard,
// shard.Tx.BeginUnit); a format-4 reader refuses such a record as corrupt. A format-4
// directory holds none.
//
// Format 5 -> 6: a hash's or set's meta may hold its elements (flag 0x20) and Redis's small
// encoding (flag 0x10); a format-5 directory holds no such meta, and a format-5 build would
// refuse one as corrupt.
func migratable(from int) bool { return from >= 2 && from <= 5 }
