package rdb

import "hash/crc64"

// jonesTable is the CRC-64 Redis puts after an RDB file and a DUMP payload: the Jones
// polynomial (0xad93d23594c935a9), reflected, initial value 0 and no final xor.
var jonesTable = crc64.MakeTable(0x95AC9329AC4BC9B5)

// CRC64 continues Redis's CRC-64 of the bytes before p (crc is 0 for none) over p.
// hash/crc64 inverts the value on the way in and out; undoing both gives Redis's variant
// with the standard library's table-driven speed.
func CRC64(crc uint64, p []byte) uint64 {
	return ^crc64.Update(^crc, jonesTable, p)
}
