// Package apptest runs real applications' Redis clients against shardis: the job queues
// (BullMQ from npm, python-rq from Debian) that people point at a Redis, each doing what an
// application does with it. The package has no code of its own; its tests start a server
// with internal/testserver and run the client programs in testdata/.
package apptest
