package shard

// migratable reports whether a data directory of format from can be brought to
// codec.FormatVersion by rewriting its manifest alone.
//
// Format 2 -> 3: binlog records gained units, marked by the top bit of the record's time
// field, which a format-2 writer never set (unix milliseconds do not reach it). Every format-2
// record is therefore a valid format-3 record that stands alone, and nothing else changed.
// Once migrated, a format-2 build refuses the directory: it would misread unit records.
func migratable(from int) bool { return from == 2 }
