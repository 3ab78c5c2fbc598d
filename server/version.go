package server

// Version is shardis's own version, which --version, the start-up log and INFO server's
// shardis_version report (redis_version stays the Redis version clients expect). A release
// build may set it with -ldflags "-X shardis/server.Version=...".
var Version = "0.1.0"
