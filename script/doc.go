// Package script is shardis's Lua engine, as Redis 7.0 has it: the sandboxed gopher-lua
// states (VM) and their libraries (redis, cjson, cmsgpack, bit, struct, Lua 5.1's
// string.format and number formatting), the conversions between RESP replies and Lua values,
// the script cache (Cache, by SHA1), the registry of running scripts behind SCRIPT KILL,
// FUNCTION KILL and the BUSY state (Running), and FUNCTION's engine: libraries, their
// registration, the runners FCALL calls functions in, and FUNCTION DUMP's payload
// (Functions, Libraries).
//
// It runs no command itself: a script's redis.call hands the command to the run's Caller,
// which package cmds implements (lookup, admission checks, the executor). Commands, routing
// and transactions are cmds's; keeping libraries on disk is too.
//
// Errors this package returns are Redis's error reply texts, code included ("ERR …",
// "NOTBUSY …"): a command replies err.Error() as it is.
package script
