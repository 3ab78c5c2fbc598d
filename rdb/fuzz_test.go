package rdb

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzReadPayload feeds the reader value bodies (the footer made right, so they get past
// the checksum) seeded with the payloads recorded from redis-server: it must answer nil or
// ErrBadFormat, never panic, and on nil have handed over exactly one key.
func FuzzReadPayload(f *testing.F) {
	b, err := os.ReadFile(filepath.Join("testdata", "payloads.json"))
	if err != nil {
		f.Fatal(err)
	}
	var payloads []recordedPayload
	if err := json.Unmarshal(b, &payloads); err != nil {
		f.Fatal(err)
	}
	for _, p := range payloads {
		if len(p.Payload) < 1024 { // big ones slow every run (and minimizing) down and add little
			f.Add(p.Payload[:len(p.Payload)-payloadFooterBytes])
		}
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		rec := newRecorder()
		err := ReadPayload(withFooter(body, Version), rec)
		if err != nil && !errors.Is(err, ErrBadFormat) {
			t.Fatalf("err %v, want nil or ErrBadFormat", err)
		}
		if err == nil && (rec.began != 1 || rec.ended != 1) {
			t.Fatalf("no error, but BeginKey %d times and EndKey %d times", rec.began, rec.ended)
		}
	})
}
