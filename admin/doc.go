// Package admin holds the command families that administer the server rather than its
// data: INFO, CONFIG and the server commands (servercmds.go), CLIENT (clientcmd.go) and its
// TRACKING side (tracking.go), MEMORY, LATENCY. They read and change the server's state
// (server.Server: clients, statistics, configuration, users) and run in the event loop or
// holding no shard; the data families, which run in the shards over package datatype, stay
// in package cmds.
//
// Each command is declared once, as in cmds: a keyed cmds.Command literal registered with
// cmds.Register from the family's init, whose RunServer is handed the server. The executor imports this package, so wherever
// commands run, these are in the table. Their tests go through the real protocol beside the
// other families' in cmds/*_test.go, which share its helpers and recordings.
package admin
